// Device building blocks shared by the KNN kernels: the (distance, index) order, the
// distance finishing rule, a block arg-min, a shared-memory bitonic sort and the
// merge of a sorted candidate run into a running list. Explicit _rn intrinsics keep
// nvcc from contracting into FMAs, so results equal the CPU's (src/knn/distance.cpp).
#pragma once

#include <cfloat>
#include <climits>
#include <cstdint>

#include "kernels/knn/knn.cuh"

namespace hb::kernels::knn::detail {

inline constexpr std::int64_t kNoIndex = INT64_MAX;
inline constexpr int kNoLocal = INT_MAX;  // empty slot of a chunk-local buffer

__device__ __forceinline__ bool closer(float da, std::int64_t ia, float db, std::int64_t ib) {
  return da < db || (da == db && ia < ib);
}

// One term of the direct distance, (a - b)^2 in FP64 (every recompute forms it so).
__device__ __forceinline__ double squared_difference(float a, float b) {
  const double d = __dsub_rn(static_cast<double>(a), static_cast<double>(b));
  return __dmul_rn(d, d);
}

// sum((q - t)^2) in FP64 in band order: exact zero for duplicates.
__device__ inline float direct_squared_distance(const float* a, const float* b, int dims) {
  double sum = 0.0;
  for (int i = 0; i < dims; ++i) sum = __dadd_rn(sum, squared_difference(a[i], b[i]));
  return static_cast<float>(sum);
}

// Below refine_below(dims) * (|q|^2 + |t|^2), the expanded squared distance has lost
// too many digits and is recomputed directly.
__device__ inline float refine_below(int dims) {
  return __fmul_rn(__fmul_rn(2.0f, static_cast<float>(dims)), FLT_EPSILON);
}

// The expansion |q|^2 + |t|^2 - 2 q.t; `direct` when it has lost too many digits (or is
// NaN) and the pair must be recomputed directly.
__device__ __forceinline__ float expanded_distance(float ip, float qn, float tn, float refine, bool& direct) {
  const float norms = __fadd_rn(qn, tn);
  const float expanded = __fsub_rn(norms, __fmul_rn(2.0f, ip));
  direct = !(expanded > __fmul_rn(refine, norms));
  return expanded;
}

__device__ inline float euclidean_distance(const DistanceInputs& in, int q, int t, float ip, float qn, float tn,
                                           float refine) {
  bool direct = false;
  const float expanded = expanded_distance(ip, qn, tn, refine, direct);
  if (!direct) return expanded;
  return direct_squared_distance(in.queries + static_cast<std::int64_t>(q) * in.dims,
                                 in.train + static_cast<std::int64_t>(t) * in.dims, in.dims);
}

__device__ inline float cosine_distance(float ip, float qn, float tn) {
  const float denominator = __fmul_rn(qn, tn);
  const float similarity = denominator > 0.0f ? __fdiv_rn(ip, denominator) : 0.0f;
  const float d = __fsub_rn(1.0f, similarity);
  return d < 0.0f ? 0.0f : (d > 2.0f ? 2.0f : d);
}

// The ranking distance of tile row `q` to chunk row `t` from their inner product and
// their norms (in.query_norms[q], in.train_norms[t]: loaded by the caller, early).
__device__ inline float finish_distance(const DistanceInputs& in, int q, int t, float ip, float qn, float tn) {
  return in.metric == Metric::euclidean ? euclidean_distance(in, q, t, ip, qn, tn, refine_below(in.dims))
                                        : cosine_distance(ip, qn, tn);
}

// finish_distance for one query row with its constants taken out of a scan's loop: the
// same bits, fewer instructions a distance (the block path's scan is most of its time).
// It also screens pairs before finishing them, with one FMA: x = tn - 2 ip against a
// limit set from the list's farthest distance B (bound_by). The screen only lets
// through more than the exact test keeps. Why, with u = 2^-24 and S = qn + the largest
// tn: finish returns E = fl(fl(qn + tn) - 2 ip) unless E <= fl(refine fl(qn + tn)), so
// a pair it could keep has E <= M = max(B, refine S (1 + 2^-20)); then
// tn - 2 ip <= M - qn + 2u M + u S, and x is within u |tn - 2 ip| <= 3u S of that
// (|ip| <= |q||t| but for the GEMM's rounding). The limit M - qn + 16u (M + S) is
// rounded up. Cosine, unknown or overflowing norms: no screen.
class RowFinisher {
 public:
  __device__ RowFinisher(const DistanceInputs& in, int q, float qn) : in_(in), q_(q), qn_(qn) {
    refine_ = refine_below(in.dims);
    limit_ = __int_as_float(0x7f800000);  // +inf
  }

  // The distance to chunk row t with inner product ip and norm tn.
  __device__ float operator()(int t, float ip, float tn) const {
    return in_.metric == Metric::euclidean ? euclidean_distance(in_, q_, t, ip, qn_, tn, refine_)
                                           : cosine_distance(ip, qn_, tn);
  }

  // operator() without the recompute: the distance, or `direct` = true where the
  // caller must take direct_squared_distance(query_row(), training row) instead.
  __device__ __forceinline__ float expanded(float ip, float tn, bool& direct) const {
    direct = false;
    return in_.metric == Metric::euclidean ? expanded_distance(ip, qn_, tn, refine_, direct)
                                           : cosine_distance(ip, qn_, tn);
  }

  __device__ const float* query_row() const { return in_.queries + static_cast<std::int64_t>(q_) * in_.dims; }

  // From now on, may_keep passes every pair that finishes at or below `bound`.
  __device__ void bound_by(float bound) {
    if (in_.metric != Metric::euclidean || in_.train_norm_max == nullptr) return;  // the limit stays +inf
    const double s = static_cast<double>(qn_) + static_cast<double>(*in_.train_norm_max);
    if (!(s <= kScreenMaxNorms)) return;  // NaN too
    const double m = fmax(static_cast<double>(bound), refine_ * s * (1.0 + 0x1p-20));
    limit_ = __double2float_ru(m - static_cast<double>(qn_) + 0x1p-20 * (m + s));
  }

  // False only for pairs that finish farther than the bound (a NaN x passes).
  __device__ __forceinline__ bool may_keep(float ip, float tn) const { return !(__fmaf_rn(-2.0f, ip, tn) > limit_); }

 private:
  static constexpr double kScreenMaxNorms = 1e37;  // FP32 sums of norms stay finite
  const DistanceInputs& in_;
  int q_;
  float qn_;
  float refine_ = 0.0f;
  float limit_;
};

__device__ inline float finish_distance(const DistanceInputs& in, int q, int t, float ip) {
  return finish_distance(in, q, t, ip, in.query_norms[q], in.train_norms[t]);
}

// Warp-wide arg-min: lane 0 ends with the warp's closest pair.
__device__ inline void warp_argmin(float& d, int& i) {
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float od = __shfl_down_sync(0xffffffffu, d, offset);
    const int oi = __shfl_down_sync(0xffffffffu, i, offset);
    if (closer(od, oi, d, i)) {
      d = od;
      i = oi;
    }
  }
}

// Block-wide arg-min of one (distance, local index) pair per thread; every thread gets
// the winner. `scratch` holds 2 * 32 words of shared memory.
__device__ inline void block_argmin(float& d, int& i, float* scratch_d, int* scratch_i) {
  warp_argmin(d, i);
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int warps = (static_cast<int>(blockDim.x) + 31) / 32;
  __syncthreads();  // scratch may still be read from the previous call
  if (lane == 0) {
    scratch_d[warp] = d;
    scratch_i[warp] = i;
  }
  __syncthreads();
  if (warp == 0) {
    d = lane < warps ? scratch_d[lane] : __int_as_float(0x7f800000);  // +inf
    i = lane < warps ? scratch_i[lane] : kNoLocal;
    warp_argmin(d, i);
    if (lane == 0) {
      scratch_d[0] = d;
      scratch_i[0] = i;
    }
  }
  __syncthreads();
  d = scratch_d[0];
  i = scratch_i[0];
}

// Ascending bitonic sort of n (a power of two) shared-memory pairs by (d, i).
template <class Index>
__device__ inline void block_bitonic_sort(float* d, Index* i, int n) {
  for (int size = 2; size <= n; size <<= 1) {
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      __syncthreads();
      for (int a = static_cast<int>(threadIdx.x); a < n; a += static_cast<int>(blockDim.x)) {
        const int b = a ^ stride;
        if (b <= a) continue;
        const bool ascending = (a & size) == 0;
        const bool swap = ascending ? closer(d[b], i[b], d[a], i[a]) : closer(d[a], i[a], d[b], i[b]);
        if (swap) {
          const float td = d[a];
          const Index ti = i[a];
          d[a] = d[b];
          i[a] = i[b];
          d[b] = td;
          i[b] = ti;
        }
      }
    }
  }
  __syncthreads();
}

// running (global, k pairs, ascending, empty slots last) := the k smallest of itself
// and `count` ascending candidates, all real and distinct from the running pairs.
// Each pair's output rank is its position plus the number of pairs of the other run
// that are closer (a merge path by binary search); scratch receives ranks < k and is
// copied back. Candidate c is read as (cand_d(c), cand_i(c)). An empty list (its first
// slot empty, so every slot is) takes the first k candidates as they are, the merge's
// result without its searches, which read the list from global memory step by step:
// the first merge of every row of a one-chunk search.
template <class CandD, class CandI>
__device__ void merge_into(float* run_d, std::int64_t* run_i, int k, CandD cand_d, CandI cand_i, int count,
                           float* scratch_d, std::int64_t* scratch_i) {
  const bool empty = run_i[0] == kNoIndex && run_d[0] == __int_as_float(0x7f800000);
  __syncthreads();  // every thread has read the first slot before any writes it
  if (empty) {
    for (int c = static_cast<int>(threadIdx.x); c < min(count, k); c += static_cast<int>(blockDim.x)) {
      run_d[c] = cand_d(c);
      run_i[c] = cand_i(c);
    }
    __syncthreads();
    return;
  }
  for (int c = static_cast<int>(threadIdx.x); c < count; c += static_cast<int>(blockDim.x)) {
    const float d = cand_d(c);
    const std::int64_t g = cand_i(c);
    int lo = 0, hi = k;
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (closer(run_d[mid], run_i[mid], d, g)) lo = mid + 1;
      else hi = mid;
    }
    const int rank = c + lo;
    if (rank < k) {
      scratch_d[rank] = d;
      scratch_i[rank] = g;
    }
  }
  for (int a = static_cast<int>(threadIdx.x); a < k; a += static_cast<int>(blockDim.x)) {
    const float d = run_d[a];
    const std::int64_t g = run_i[a];
    int lo = 0, hi = count;
    while (lo < hi) {
      const int mid = (lo + hi) / 2;
      if (closer(cand_d(mid), cand_i(mid), d, g)) lo = mid + 1;
      else hi = mid;
    }
    const int rank = a + lo;
    if (rank < k) {
      scratch_d[rank] = d;
      scratch_i[rank] = g;
    }
  }
  __syncthreads();
  for (int a = static_cast<int>(threadIdx.x); a < k; a += static_cast<int>(blockDim.x)) {
    run_d[a] = scratch_d[a];
    run_i[a] = scratch_i[a];
  }
  __syncthreads();
}

}  // namespace hb::kernels::knn::detail
