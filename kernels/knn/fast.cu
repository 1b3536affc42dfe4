// fast: selection fused with distance finishing, so finished distances are never
// written. One block per query row of an inner-product slab. Each round, every thread
// finishes kPerThread distances and keeps those closer than the list's current k-th
// pair (the threshold) in a shared-memory candidate buffer; when it holds max(k, one
// round) candidates or the next round could overflow it, the buffer is bitonic-sorted
// and merged into the running list (merge path by binary search), which tightens the
// threshold. With k small the threshold is tight after the first merge and almost
// nothing is buffered; any k works because the running list lives in global memory.
#include <algorithm>

#include "kernels/knn/detail/pair.cuh"

namespace hb::kernels::knn {
namespace {

constexpr int kThreads = 256;
constexpr int kPerThread = 4;
constexpr int kRound = kThreads * kPerThread;
constexpr int kCapacity = 4096;  // candidates: 32 KiB of shared memory
static_assert(kCapacity >= kRound && (kCapacity & (kCapacity - 1)) == 0);

struct Buffer {
  float d[kCapacity];
  int i[kCapacity];
  int count;
};

// Sorts the buffered candidates and folds them into the running list; empties the buffer.
__device__ void flush(Buffer& buf, int count, std::int64_t first_index, float* run_d, std::int64_t* run_i, int k,
                      float* scratch_d, std::int64_t* scratch_i) {
  int padded = 1;
  while (padded < count) padded *= 2;
  for (int a = count + static_cast<int>(threadIdx.x); a < padded; a += kThreads) {
    buf.d[a] = __int_as_float(0x7f800000);
    buf.i[a] = detail::kNoLocal;
  }
  detail::block_bitonic_sort(buf.d, buf.i, padded);
  const float* cd = buf.d;
  const int* ci = buf.i;
  detail::merge_into(
      run_d, run_i, k, [cd](int c) { return cd[c]; },
      [ci, first_index](int c) { return first_index + ci[c]; }, count, scratch_d, scratch_i);
  if (threadIdx.x == 0) buf.count = 0;
  __syncthreads();
}

__global__ void __launch_bounds__(kThreads) fused_kernel(DistanceInputs in, const float* slab, int rows, int cols,
                                                         int ld, int col0, std::int64_t first_index, Lists running,
                                                         Lists scratch) {
  __shared__ Buffer buf;
  const int r = static_cast<int>(blockIdx.x);
  if (r >= rows) return;
  const int k = running.k;
  float* run_d = running.distance + static_cast<std::int64_t>(r) * k;
  std::int64_t* run_i = running.index + static_cast<std::int64_t>(r) * k;
  float* scratch_d = scratch.distance + static_cast<std::int64_t>(r) * k;
  std::int64_t* scratch_i = scratch.index + static_cast<std::int64_t>(r) * k;
  const float* row = slab + static_cast<std::int64_t>(r) * ld;
  if (threadIdx.x == 0) buf.count = 0;
  __syncthreads();
  const int flush_at = max(k, kRound);
  float bound_d = run_d[k - 1];
  std::int64_t bound_i = run_i[k - 1];
  for (int base = 0; base < cols; base += kRound) {
    const int held = buf.count;  // same value in every thread: read between barriers
    __syncthreads();
    // Flush when the next round could overflow, and as soon as k candidates are held:
    // early flushes tighten the threshold (for small k, after the first round).
    if (held > kCapacity - kRound || held >= flush_at) {
      flush(buf, held, first_index, run_d, run_i, k, scratch_d, scratch_i);
      bound_d = run_d[k - 1];
      bound_i = run_i[k - 1];
    }
    float ip[kPerThread];
#pragma unroll
    for (int u = 0; u < kPerThread; ++u) {
      const int c = base + u * kThreads + static_cast<int>(threadIdx.x);
      ip[u] = c < cols ? row[c] : 0.0f;
    }
#pragma unroll
    for (int u = 0; u < kPerThread; ++u) {
      const int c = base + u * kThreads + static_cast<int>(threadIdx.x);
      if (c >= cols) continue;
      const int local = col0 + c;
      const float d = detail::finish_distance(in, r, local, ip[u]);
      if (detail::closer(d, first_index + local, bound_d, bound_i)) {
        const int slot = atomicAdd(&buf.count, 1);
        buf.d[slot] = d;
        buf.i[slot] = local;
      }
    }
    __syncthreads();
  }
  const int held = buf.count;
  __syncthreads();
  if (held > 0) flush(buf, held, first_index, run_d, run_i, k, scratch_d, scratch_i);
}

}  // namespace

int fused_rows_per_wave() {
  int device = 0, sms = 0, blocks = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fused_kernel, kThreads, 0) != cudaSuccess) {
    cudaGetLastError();
    return 512;
  }
  return std::max(1, sms * blocks);
}

cudaError_t select_fused(const DistanceInputs& in, const float* slab, int rows, int cols, int ld, int col0,
                         std::int64_t first_index, Lists running, Lists scratch, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (running.k < 1 || scratch.k != running.k || ld < cols) return cudaErrorInvalidValue;
  fused_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(in, slab, rows, cols, ld, col0, first_index,
                                                                      running, scratch);
  return cudaGetLastError();
}

}  // namespace hb::kernels::knn
