// fast, warp path (k <= fused_warp_max_k() = 32): one warp per query row of an
// inner-product slab keeps the row's 32 * S closest pairs sorted across its lanes'
// registers (position p = 32 s + lane in register s). Lanes screen coalesced batches
// of the row with one FMA a pair (detail::RowFinisher::may_keep), the next batch's loads
// in flight meanwhile, and finish only where a lane's pair passed; a ballot finds those
// closer than the list's k-th pair and each is inserted by a warp-wide shift, after
// which the others are tested again. Pairs whose expansion lost its digits are
// recomputed by the whole warp (warp_direct_distance). No barriers: the block path
// (fast.cu) pays two barriers per round of 1024 columns and a sort-and-merge flush per
// slab, which at small k were most of its time (ncu, d = 224, k = 10: 18 cycles per
// issued instruction, mostly waiting on loads between barriers). H200, 10^5 rows,
// k = 10: 1.31 -> 2.15 M queries/s at d = 32, 0.62 -> 0.83 M at d = 224.
// Positions k .. 32 S - 1 hold pairs pushed out of the first k: the list stays sorted,
// so they never decide where a closer pair goes and never leave the registers.
#include <algorithm>

#include "kernels/knn/detail/fast_warp.hpp"
#include "kernels/knn/detail/pair.cuh"

namespace hb::kernels::knn {
namespace {

constexpr unsigned kFull = 0xffffffffu;
// Blocks of two rows, at most 80 registers (12 blocks an SM). A row's recomputes
// (warp_direct_distance) made rows uneven: with 8-row blocks capped at 64 registers the
// scan spilled, and a slow row held its block's place. 40 GB dist scene, one H200, GPU
// search time: 64 registers (spilling) 2.99 s, 8 rows and 80 registers 2.72-2.74 s,
// 4 rows 2.64-2.72 s, 2 rows 2.64-2.67 s.
constexpr int kWarpThreads = 64;
constexpr int kMinBlocks = 12;
constexpr int kRowsPerBlock = kWarpThreads / 32;
constexpr int kUnroll = 4;  // columns a lane loads per batch (H200: 4 beat 2 and 8)
// Registers per lane: k <= 32 S. S = 2 and 4 (k <= 64, 128) lost to the block path once
// both screened pairs and the block path sampled its first bound (H200, d = 32: k = 64
// 2.05 -> 2.23 M queries/s, k = 100 1.76 -> 2.19 M; at k <= 32 the warp path stays 7-11 %
// ahead); the list is written for any S, for another GPU's balance.
constexpr int kMaxSlots = 1;
constexpr int kDirectTerms = 256;  // a warp's recompute terms per pass: 2 KiB of shared memory

template <int S>
struct WarpList {
  float d[S];
  std::int64_t i[S];
};

// Register `reg` of every lane, picked with a warp-uniform index (no local memory).
template <int S, class T>
__device__ __forceinline__ T pick(const T (&v)[S], int reg) {
  T out = v[0];
#pragma unroll
  for (int s = 1; s < S; ++s)
    if (s == reg) out = v[s];
  return out;
}

// The pair at list position p, in every lane.
template <int S>
__device__ __forceinline__ void list_at(const WarpList<S>& list, int p, float& d, std::int64_t& i) {
  d = __shfl_sync(kFull, pick<S>(list.d, p >> 5), p & 31);
  i = __shfl_sync(kFull, pick<S>(list.i, p >> 5), p & 31);
}

// Inserts (cd, ci), closer than the pair at position 31 S; the last pair drops out.
template <int S>
__device__ __forceinline__ void insert(WarpList<S>& list, float cd, std::int64_t ci, int lane) {
  int at = 0;
#pragma unroll
  for (int s = 0; s < S; ++s) at += __popc(__ballot_sync(kFull, detail::closer(list.d[s], list.i[s], cd, ci)));
  float up_d[S], last_d[S];
  std::int64_t up_i[S], last_i[S];
#pragma unroll
  for (int s = 0; s < S; ++s) {
    up_d[s] = __shfl_up_sync(kFull, list.d[s], 1);
    up_i[s] = __shfl_up_sync(kFull, list.i[s], 1);
    last_d[s] = __shfl_sync(kFull, list.d[s], 31);
    last_i[s] = __shfl_sync(kFull, list.i[s], 31);
  }
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int position = s * 32 + lane;
    if (position == at) {
      list.d[s] = cd;
      list.i[s] = ci;
    } else if (position > at) {  // position >= 1: the pair before it moves up
      list.d[s] = lane > 0 ? up_d[s] : last_d[s > 0 ? s - 1 : 0];
      list.i[s] = lane > 0 ? up_i[s] : last_i[s > 0 ? s - 1 : 0];
    }
  }
}

// Whether a pair whose FP64 terms (q_b - t_b)^2 add up to `estimate` in some order
// finishes farther than `bound`. Every term and partial sum is nonnegative, so the
// band-order sum lies within (2 dims + 64) 2^-53 of the estimate, far inside the 2^-22
// of `bound` asked for: the float it rounds to is then above `bound` (never equal, which
// would hand the tie to the index). An unfilled list (bound +inf) and NaN rule nothing out.
__device__ __forceinline__ bool surely_farther(double estimate, float bound, int dims) {
  const double margin = (2.0 * dims + 64.0) * 0x1p-53;
  return estimate >= 0x1p-900 && estimate * (1.0 - margin) > static_cast<double>(bound) * (1.0 + 0x1p-22);
}

// detail::direct_squared_distance of the row's query and training row `t`, by the whole
// warp, for the lane whose pair lost its digits to the expansion; +inf when the pair is
// surely farther than `bound`. Lanes add the FP64 terms side by side first (the estimate
// rules out most pairs: on a centred AVIRIS-like scene, about 4 in 5 of those recomputed
// were not kept, and rows of a tight class recompute a hundred or more); only a pair
// that could be kept has its terms added by lane 0 in band order, passes of
// kDirectTerms through `terms`, so the bits are the serial loop's. One lane doing it
// all waited on 2 x dims dependent loads for every such pair.
__device__ __forceinline__ float warp_direct_distance(const float* query, const float* train, int dims, float bound,
                                                      double* terms, int lane) {
  const auto term = [&](int b) { return detail::squared_difference(query[b], __ldg(train + b)); };
  double estimate = 0.0;
  for (int b = lane; b < dims; b += 32) estimate += term(b);
  for (int offset = 16; offset > 0; offset >>= 1) estimate += __shfl_xor_sync(kFull, estimate, offset);
  if (surely_farther(estimate, bound, dims)) return __int_as_float(0x7f800000);
  double sum = 0.0;
  for (int b0 = 0; b0 < dims; b0 += kDirectTerms) {
    const int n = min(kDirectTerms, dims - b0);
    for (int j = lane; j < n; j += 32) terms[j] = term(b0 + j);
    __syncwarp();
    if (lane == 0)
      for (int j = 0; j < n; ++j) sum = __dadd_rn(sum, terms[j]);
    __syncwarp();
  }
  return static_cast<float>(__shfl_sync(kFull, sum, 0));
}

// The slab is read once: streaming loads (__ldcs) keep it from evicting the norms.
template <int U>
struct Batch {
  float ip[U], tn[U];
  __device__ __forceinline__ void load(const float* row, const float* train_norms, int base, int cols, int lane) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = base + u * 32 + lane;
      ip[u] = c < cols ? __ldcs(row + c) : 0.0f;
      tn[u] = c < cols ? __ldg(train_norms + c) : 0.0f;
    }
  }
};

template <int S, int U>
__global__ void __launch_bounds__(kWarpThreads, kMinBlocks)
    fused_warp_kernel(DistanceInputs in, const float* slab, int rows, int cols, int ld, int col0,
                      std::int64_t first_index, Lists running) {
  const int r = static_cast<int>(blockIdx.x) * kRowsPerBlock + static_cast<int>(threadIdx.x) / 32;
  if (r >= rows) return;  // whole warps only
  const int lane = static_cast<int>(threadIdx.x) % 32;
  __shared__ double direct_terms[kRowsPerBlock][kDirectTerms];
  double* terms = direct_terms[threadIdx.x / 32];
  const int k = running.k;
  float* run_d = running.distance + static_cast<std::int64_t>(r) * k;
  std::int64_t* run_i = running.index + static_cast<std::int64_t>(r) * k;
  WarpList<S> list;
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int position = s * 32 + lane;
    list.d[s] = position < k ? run_d[position] : __int_as_float(0x7f800000);
    list.i[s] = position < k ? run_i[position] : detail::kNoIndex;
  }
  float bound_d;
  std::int64_t bound_i;
  list_at(list, k - 1, bound_d, bound_i);
  const float* row = slab + static_cast<std::int64_t>(r) * ld;
  const float* train_norms = in.train_norms + col0;
  detail::RowFinisher finish(in, r, in.query_norms[r]);
  finish.bound_by(bound_d);
  constexpr int kStride = 32 * U;
  Batch<U> now;
  now.load(row, train_norms, 0, cols, lane);
  for (int base = 0; base < cols; base += kStride) {
    Batch<U> next;  // in flight while this batch is finished and filtered
    next.load(row, train_norms, base + kStride, cols, lane);
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int c = base + u * 32 + lane;
      const bool screened_in = c < cols && finish.may_keep(now.ip[u], now.tn[u]);
      if (!__any_sync(kFull, screened_in)) continue;
      float d = __int_as_float(0x7f800000);
      std::int64_t g = detail::kNoIndex;
      bool direct = false;
      if (screened_in) {
        d = finish.expanded(now.ip[u], now.tn[u], direct);
        g = first_index + col0 + c;
      }
      for (unsigned todo = __ballot_sync(kFull, direct); todo != 0; todo &= todo - 1) {
        const int source = __ffs(todo) - 1;
        const auto t = static_cast<std::int64_t>(col0) + __shfl_sync(kFull, c, source);
        const float exact =
            warp_direct_distance(finish.query_row(), in.train + t * in.dims, in.dims, bound_d, terms, lane);
        if (lane == source) d = exact;
      }
      unsigned wanted = __ballot_sync(kFull, detail::closer(d, g, bound_d, bound_i));
      if (wanted == 0) continue;  // the bound stands
      while (wanted != 0) {
        const int source = __ffs(wanted) - 1;
        insert(list, __shfl_sync(kFull, d, source), __shfl_sync(kFull, g, source), lane);
        list_at(list, k - 1, bound_d, bound_i);
        wanted &= wanted - 1;
        wanted &= __ballot_sync(kFull, detail::closer(d, g, bound_d, bound_i));
      }
      finish.bound_by(bound_d);
    }
    now = next;
  }
#pragma unroll
  for (int s = 0; s < S; ++s) {
    const int position = s * 32 + lane;
    if (position < k) {
      run_d[position] = list.d[s];
      run_i[position] = list.i[s];
    }
  }
}

template <int S>
cudaError_t launch(const DistanceInputs& in, const float* slab, int rows, int cols, int ld, int col0,
                   std::int64_t first_index, Lists running, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
  fused_warp_kernel<S, kUnroll><<<blocks, kWarpThreads, 0, stream>>>(in, slab, rows, cols, ld, col0, first_index,
                                                                   running);
  return cudaGetLastError();
}

}  // namespace

int fused_warp_max_k() { return 32 * kMaxSlots; }

namespace detail {

cudaError_t select_fused_warp(const DistanceInputs& in, const float* slab, int rows, int cols, int ld, int col0,
                              std::int64_t first_index, Lists running, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (running.k < 1 || running.k > fused_warp_max_k() || ld < cols) return cudaErrorInvalidValue;
  return launch<kMaxSlots>(in, slab, rows, cols, ld, col0, first_index, running, stream);
}

}  // namespace detail

}  // namespace hb::kernels::knn
