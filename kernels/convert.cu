#include "kernels/convert.cuh"

#include "src/base/physical_sample.hpp"

namespace hb::kernels {
namespace {

template <class T>
__global__ void widen_to_f32(const T* __restrict__ in, float* __restrict__ out, std::size_t n) {
  // Grid-stride loop: consecutive threads read consecutive samples (coalesced).
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = static_cast<float>(in[i]);
}

// The band follows i without a division: the grid stride is a fixed step in bands.
template <class T>
__global__ void widen_physical(const T* __restrict__ in, std::int64_t bands, const double* __restrict__ gain,
                               const double* __restrict__ offset, bool has_ignore, double ignore,
                               float* __restrict__ out, std::size_t n) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  const auto b_step = static_cast<std::int64_t>(stride % static_cast<std::size_t>(bands));
  std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  auto b = static_cast<std::int64_t>(i % static_cast<std::size_t>(bands));
  for (; i < n; i += stride) {
    const auto x = static_cast<double>(in[i]);
    const bool no_data = !isfinite(x) || (has_ignore && x == ignore);
    out[i] = no_data ? __int_as_float(0x7fc00000) : physical_sample(x, gain[b], offset[b]);
    b += b_step;
    if (b >= bands) b -= bands;
  }
}

// One thread an output element (q, f), consecutive threads along a query's features:
// q and f follow i without a division (the grid stride is a fixed step in both).
template <class T>
__global__ void gather_widen_shift(const T* __restrict__ tile, std::int64_t scene_bands,
                                   const std::int64_t* __restrict__ pixel, const std::int64_t* __restrict__ band,
                                   std::size_t n, int dims, QueryScaling scaling, float* __restrict__ out) {
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  const auto d = static_cast<std::size_t>(dims);
  const int f_step = static_cast<int>(stride % d);
  const std::size_t q_step = stride / d;
  int f = static_cast<int>(i % d);
  std::size_t q = i / d;
  for (; i < n; i += stride) {
    const T stored = tile[pixel[q] * scene_bands + band[f]];
    const float v = scaling.gain ? physical_sample(static_cast<double>(stored), scaling.gain[f], scaling.offset[f])
                                 : static_cast<float>(stored);
    out[i] = scaling.shift ? static_cast<float>(static_cast<double>(v) - scaling.shift[f]) : v;
    f += f_step;
    q += q_step;
    if (f >= dims) {
      f -= dims;
      ++q;
    }
  }
}

unsigned grid_for(std::size_t n, int threads) {
  return static_cast<unsigned>(std::min<std::size_t>((n + threads - 1) / threads, 65535u * 8u));
}

}  // namespace

cudaError_t gather_queries(DataType type, const void* tile, std::int64_t scene_bands, const std::int64_t* pixel,
                           std::int64_t rows, const std::int64_t* band, int dims, QueryScaling scaling, float* out,
                           cudaStream_t stream) {
  const auto n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(dims);
  if (n == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  visit_data_type(type, [&](auto zero) {
    using T = decltype(zero);
    gather_widen_shift<T><<<grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<const T*>(tile), scene_bands,
                                                                          pixel, band, n, dims, scaling, out);
  });
  return cudaGetLastError();
}

cudaError_t physical_to_f32(DataType type, const void* in, std::int64_t bands, const double* gain,
                            const double* offset, bool has_ignore, double ignore, float* out, std::size_t n,
                            cudaStream_t stream) {
  if (n == 0 || bands <= 0) return cudaSuccess;
  constexpr int kThreads = 256;
  visit_data_type(type, [&](auto zero) {
    using T = decltype(zero);
    widen_physical<T><<<grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<const T*>(in), bands, gain, offset,
                                                                      has_ignore, ignore, out, n);
  });
  return cudaGetLastError();
}

cudaError_t convert_to_f32(DataType type, const void* in, float* out, std::size_t n,
                           cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  visit_data_type(type, [&](auto zero) {
    using T = decltype(zero);
    widen_to_f32<T><<<grid_for(n, kThreads), kThreads, 0, stream>>>(static_cast<const T*>(in), out, n);
  });
  return cudaGetLastError();
}

}  // namespace hb::kernels
