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

// The same with a per-band shift: the band index f follows i without a division (the
// grid stride is a fixed number of bands on).
template <class T>
__global__ void widen_shift_f32(const T* __restrict__ in, float* __restrict__ out, std::size_t n, int dims,
                                const double* __restrict__ shift) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  const int step = static_cast<int>(stride % static_cast<std::size_t>(dims));
  int f = static_cast<int>(i % static_cast<std::size_t>(dims));
  for (; i < n; i += stride) {
    const float v = static_cast<float>(in[i]);
    out[i] = shift ? static_cast<float>(static_cast<double>(v) - shift[f]) : v;
    f += step;
    if (f >= dims) f -= dims;
  }
}

unsigned grid_for(std::size_t n, int threads) {
  return static_cast<unsigned>(std::min<std::size_t>((n + threads - 1) / threads, 65535u * 8u));
}

}  // namespace

cudaError_t widen_and_shift(io::DataType type, const void* in, std::int64_t rows, int dims, const double* shift,
                            float* out, cudaStream_t stream) {
  const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(dims);
  if (n == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  io::visit_data_type(type, [&](auto zero) {
    using T = decltype(zero);
    widen_shift_f32<T><<<grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<const T*>(in), out, n, dims, shift);
  });
  return cudaGetLastError();
}

cudaError_t convert_to_f32(io::DataType type, const void* in, float* out, std::size_t n,
                           cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  io::visit_data_type(type, [&](auto zero) {
    using T = decltype(zero);
    widen_to_f32<T><<<grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<const T*>(in), out, n);
  });
  return cudaGetLastError();
}

}  // namespace hb::kernels
