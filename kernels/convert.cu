#include "kernels/convert.cuh"

namespace hb::kernels {
namespace {

template <class T>
__global__ void widen_to_f32(const T* __restrict__ in, float* __restrict__ out, std::size_t n) {
  // Grid-stride loop: consecutive threads read consecutive samples (coalesced).
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<float>(in[i]);
}

}  // namespace

cudaError_t convert_to_f32(io::DataType type, const void* in, float* out, std::size_t n,
                           cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>((n + kThreads - 1) / kThreads, 65535u * 8u));
  io::visit_data_type(type, [&](auto zero) {
    using T = decltype(zero);
    widen_to_f32<T><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(in), out, n);
  });
  return cudaGetLastError();
}

}  // namespace hb::kernels
