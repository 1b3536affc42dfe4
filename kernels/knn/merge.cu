// Running-list maintenance: empty lists, and the merge of chunk-level candidate lists
// into them (the reduction across chunks; the distributed search merges ranks alike).
#include <algorithm>

#include "kernels/knn/detail/pair.cuh"

namespace hb::kernels::knn {
namespace {

constexpr int kThreads = 256;

__global__ void fill_kernel(Lists lists, std::int64_t slots) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t s = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; s < slots; s += step) {
    lists.distance[s] = __int_as_float(0x7f800000);
    lists.index[s] = detail::kNoIndex;
  }
}

__global__ void merge_kernel(Lists running, Lists candidates, int count, int rows, Lists scratch) {
  const int r = static_cast<int>(blockIdx.x);
  if (r >= rows) return;
  const std::int64_t run0 = static_cast<std::int64_t>(r) * running.k;
  const std::int64_t cand0 = static_cast<std::int64_t>(r) * candidates.k;
  const float* cd = candidates.distance + cand0;
  const std::int64_t* ci = candidates.index + cand0;
  detail::merge_into(
      running.distance + run0, running.index + run0, running.k, [cd](int c) { return cd[c]; },
      [ci](int c) { return ci[c]; }, count, scratch.distance + run0, scratch.index + run0);
}

}  // namespace

cudaError_t fill_empty(Lists lists, int rows, cudaStream_t stream) {
  const std::int64_t slots = static_cast<std::int64_t>(rows) * lists.k;
  if (slots <= 0) return cudaSuccess;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((slots + kThreads - 1) / kThreads, 1 << 16));
  fill_kernel<<<blocks, kThreads, 0, stream>>>(lists, slots);
  return cudaGetLastError();
}

cudaError_t merge_lists(Lists running, Lists candidates, int count, int rows, Lists scratch, cudaStream_t stream) {
  if (rows <= 0 || count <= 0) return cudaSuccess;
  if (count > candidates.k || scratch.k != running.k) return cudaErrorInvalidValue;
  merge_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(running, candidates, count, rows, scratch);
  return cudaGetLastError();
}

}  // namespace hb::kernels::knn
