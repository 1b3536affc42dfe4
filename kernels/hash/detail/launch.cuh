// Bulk launches of the GPU table: one warp per operation over a grid-stride loop, the
// operation made by a small "source" functor (ops array, keys + values, keys only).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/hash/hopscotch_ref.cuh"

namespace hb::hash::detail {

inline constexpr int kBlockThreads = 256;  // 8 warps, 8 operations in flight per block

template <class Source>
__global__ void __launch_bounds__(kBlockThreads) apply_kernel(HopscotchRef table, Source source, OpResult* results,
                                                               std::size_t n) {
  const std::size_t warps = std::size_t{gridDim.x} * (kBlockThreads / 32);
  for (std::size_t i = (std::size_t{blockIdx.x} * kBlockThreads + threadIdx.x) / 32; i < n; i += warps) {
    const OpResult r = table.apply(source(i));
    if ((threadIdx.x & 31u) == 0 && results != nullptr) results[i] = r;
  }
}

struct OpsSource {
  const Op* ops;
  __device__ Op operator()(std::size_t i) const { return ops[i]; }
};

struct KeysSource {
  const std::uint64_t* keys;
  const std::uint32_t* values;  // null: the key's index
  OpKind kind;
  __device__ Op operator()(std::size_t i) const {
    return {keys[i], values != nullptr ? values[i] : static_cast<std::uint32_t>(i), kind};
  }
};

// Enough resident warps to hide latency, few enough that the grid-stride loop amortises.
inline unsigned grid_for(std::size_t n) {
  static const int sms = [] {
    int device = 0, count = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device);
    return std::max(count, 1);
  }();
  const std::size_t needed = (n + kBlockThreads / 32 - 1) / (kBlockThreads / 32);
  return static_cast<unsigned>(std::clamp<std::size_t>(needed, 1, std::size_t(sms) * 32));
}

template <class Source>
cudaError_t launch_apply(const HopscotchRef& table, Source source, OpResult* results, std::size_t n,
                         cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  apply_kernel<<<grid_for(n), kBlockThreads, 0, stream>>>(table, source, results, n);
  return cudaGetLastError();
}

}  // namespace hb::hash::detail
