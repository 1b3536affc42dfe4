// tensor: exact k-selection from a slab of TF32 tensor-core inner products. Two kernels,
// one block per query row each:
//  * filter: every pair's distance D~ is expanded from the approximate inner product
//    and bracketed by the proven bound E (tensor_bound.hpp): [D~ - E, D~ + E] holds the
//    FP32 distance the exact methods compute. The row keeps every pair whose lower end
//    is at most T = min(the running list's k-th distance, tau), where tau is the k-th
//    smallest upper end: sampled (the m-th of 2048 evenly spaced columns, m above the
//    sample's expected count of k) and checked in the same pass (at least k upper ends
//    must lie at or below it; else the row is rescanned whole). The kept pairs
//    (column, D~) are written over the row itself: the write position never passes the
//    columns read (a row that keeps more than half its columns is rescanned whole).
//  * exact: where a row kept k to kSortCap pairs, the k-th smallest upper end among
//    them (at least k pairs lie within it) replaces the sampled tau; each pair whose
//    lower end is within the threshold has its inner product computed again in FP32,
//    band order, one FMA a band (cuBLAS SGEMM's rounding: a chain of FMAs from 0), and
//    is finished by the exact methods' rule (detail::euclidean_distance, FP64 recompute
//    included); pairs closer than the running k-th are buffered, sorted and merged
//    into the running list (detail::merge_into), batch by batch.
// Euclidean only; the search runs `fast` for cosine.
#include <algorithm>
#include <cmath>

#include "kernels/knn/detail/pair.cuh"
#include "kernels/knn/tensor_bound.hpp"

namespace hb::kernels::knn {
namespace {

constexpr int kThreads = 256;
constexpr int kPerThread = 8;  // loads in flight a thread between the filter's barriers
constexpr int kRound = kThreads * kPerThread;
constexpr int kSamples = 2048;  // columns sampled for tau (8 KiB of shared memory)
constexpr int kBatch = 2048;    // exact distances per flush (16 KiB of shared memory)
constexpr int kSortCap = 4096;  // kept pairs whose upper ends the exact kernel sorts (16 KiB)
constexpr int kMaxDims = 8192;  // the query row in shared memory (32 KiB)

__device__ __forceinline__ float infinity() { return __int_as_float(0x7f800000); }

struct Bracket {
  float lower, upper;
};

// [D~ - E, D~ + E], rounded outward; NaN or infinite where the norms overflow (such a
// pair is always kept: !(lower > T)).
__device__ __forceinline__ Bracket bracket(float ip, float qn, float tn, float scale, float floor) {
  const float s = __fadd_rn(qn, tn);
  const float approx = __fsub_rn(s, __fmul_rn(2.0f, ip));
  const float e = __fmaf_ru(s, scale, floor);
  return {__fsub_rd(approx, e), __fadd_ru(approx, e)};
}

// Ascending bitonic sort of n (a power of two) shared-memory floats.
__device__ void sort_floats(float* v, int n) {
  for (int size = 2; size <= n; size <<= 1)
    for (int stride = size >> 1; stride > 0; stride >>= 1) {
      __syncthreads();
      for (int a = static_cast<int>(threadIdx.x); a < n; a += kThreads) {
        const int b = a ^ stride;
        if (b <= a) continue;
        const bool ascending = (a & size) == 0;
        if (ascending ? v[b] < v[a] : v[a] < v[b]) {
          const float t = v[a];
          v[a] = v[b];
          v[b] = t;
        }
      }
    }
  __syncthreads();
}

// tau for an empty (not yet full) list: the m-th smallest upper end of a sample, every
// column where the row has at most kSamples; +inf where the sample could not say.
__device__ float sampled_tau(const float* row, const float* train_norms, int col0, int cols, int k, float qn,
                             float scale, float floor, float* samples) {
  const int n = min(cols, kSamples);
  int m = k;
  if (cols > kSamples) {
    const double mean = static_cast<double>(k) * n / cols;
    m = static_cast<int>(ceil(mean + 3.0 * sqrt(mean) + 2.0));
    if (m > n / 4) return infinity();
  }
  if (m > n) return infinity();
  int padded = 1;
  while (padded < n) padded <<= 1;
  for (int i = static_cast<int>(threadIdx.x); i < padded; i += kThreads) {
    float u = infinity();
    if (i < n) {
      const int c = static_cast<int>(static_cast<std::int64_t>(i) * cols / n);
      u = bracket(row[c], qn, train_norms[col0 + c], scale, floor).upper;
    }
    samples[i] = u;
  }
  sort_floats(samples, padded);
  return samples[m - 1];
}

// One block per row: the kept pairs (column, D~ bits) of row r over the row's start,
// their count in kept[2r]; kept[2r + 1] = 1 where the sampled tau failed its check or
// the pairs would not fit (rescan the row whole).
__global__ void __launch_bounds__(kThreads) tensor_filter_kernel(DistanceInputs in, float* slab, int cols, int ld,
                                                                 int col0, Lists running, int* kept) {
  __shared__ float samples[kSamples];
  __shared__ int count;
  __shared__ int below_tau;
  __shared__ int overflow;
  const int r = static_cast<int>(blockIdx.x);
  const int k = running.k;
  float* row = slab + static_cast<std::int64_t>(r) * ld;
  const float qn = in.query_norms[r];
  const float scale = tensor_error_scale_f(in.dims);
  const float floor = static_cast<float>(tensor_error_floor(in.dims));
  const float list_bound = running.distance[static_cast<std::int64_t>(r) * k + k - 1];
  if (threadIdx.x == 0) {
    count = 0;
    below_tau = 0;
    overflow = 0;
  }
  const float tau = list_bound == infinity() && cols >= k
                        ? sampled_tau(row, in.train_norms, col0, cols, k, qn, scale, floor, samples)
                        : infinity();
  const float limit = fminf(list_bound, tau);
  int* out = reinterpret_cast<int*>(row);
  const int lane = static_cast<int>(threadIdx.x) % 32;
  int mine_below = 0;
  for (int base = 0; base < cols; base += kRound) {
    float ip[kPerThread], tn[kPerThread];
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int c = base + j * kThreads + static_cast<int>(threadIdx.x);
      ip[j] = c < cols ? row[c] : 0.0f;
      tn[j] = c < cols ? in.train_norms[col0 + c] : 0.0f;
    }
    __syncthreads();  // this round read whole before any kept pair is written into it
    const int writable = min(cols, base + kRound);  // words read so far
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int c = base + j * kThreads + static_cast<int>(threadIdx.x);
      const float approx = __fsub_rn(__fadd_rn(qn, tn[j]), __fmul_rn(2.0f, ip[j]));
      const Bracket b = bracket(ip[j], qn, tn[j], scale, floor);
      const bool keep = c < cols && !(b.lower > limit);
      mine_below += c < cols && b.upper <= tau;
      const unsigned mask = __ballot_sync(0xffffffffu, keep);
      if (mask == 0) continue;
      const int leader = __ffs(static_cast<int>(mask)) - 1;
      int at = 0;
      if (lane == leader) at = atomicAdd(&count, __popc(mask));
      at = __shfl_sync(0xffffffffu, at, leader);
      const int slot = 2 * (at + __popc(mask & ((1u << lane) - 1u)));
      if (keep && slot + 1 < writable) {
        out[slot] = c;
        row[slot + 1] = approx;
      } else if (keep) {
        overflow = 1;
      }
    }
  }
  if (tau != infinity()) atomicAdd(&below_tau, mine_below);
  __syncthreads();
  if (threadIdx.x == 0) {
    kept[2 * r] = count;
    kept[2 * r + 1] = (tau != infinity() && below_tau < k) || overflow;
  }
}

// q . t in FP32, band order, one FMA a band from 0. A thread gathers its row alone: a
// warp loading 32 rows' bands coalesced into a shared tile for 32 chains at once ran
// slower at k >= 100 (H200, d = 224, k = 1024: 0.28 against 0.41 M queries/s).
__device__ __forceinline__ float chain_inner_product(const float* q, const float* t, int dims) {
  float acc = 0.0f;
  if ((dims & 3) == 0 && (reinterpret_cast<std::uintptr_t>(t) & 15) == 0) {
    const float4* t4 = reinterpret_cast<const float4*>(t);
    for (int i = 0; i < dims / 4; ++i) {
      const float4 v = __ldg(t4 + i);
      acc = __fmaf_rn(q[4 * i], v.x, acc);
      acc = __fmaf_rn(q[4 * i + 1], v.y, acc);
      acc = __fmaf_rn(q[4 * i + 2], v.z, acc);
      acc = __fmaf_rn(q[4 * i + 3], v.w, acc);
    }
    return acc;
  }
  for (int i = 0; i < dims; ++i) acc = __fmaf_rn(q[i], __ldg(t + i), acc);
  return acc;
}

struct Batch {
  float d[kBatch];
  int i[kBatch];  // chunk-local training index
  int count;
};

// The kept pairs of row r (all columns where kept[2r + 1]) finished exactly and merged.
__global__ void __launch_bounds__(kThreads) tensor_exact_kernel(DistanceInputs in, const float* slab, int cols, int ld,
                                                                int col0, std::int64_t first_index, Lists running,
                                                                Lists scratch, const int* kept) {
  extern __shared__ float query[];
  __shared__ Batch batch;
  __shared__ float uppers[kSortCap];
  const int r = static_cast<int>(blockIdx.x);
  const int k = running.k;
  const int dims = in.dims;
  for (int b = static_cast<int>(threadIdx.x); b < dims; b += kThreads)
    query[b] = in.queries[static_cast<std::int64_t>(r) * dims + b];
  const int* columns = reinterpret_cast<const int*>(slab + static_cast<std::int64_t>(r) * ld);
  const bool whole_row = kept[2 * r + 1] != 0;
  const int n = whole_row ? cols : kept[2 * r];
  const auto offset = static_cast<std::int64_t>(r) * k;
  float* run_d = running.distance + offset;
  std::int64_t* run_i = running.index + offset;
  const float qn = in.query_norms[r];
  const float refine = detail::refine_below(dims);
  const float scale = tensor_error_scale_f(dims);
  const float floor = static_cast<float>(tensor_error_floor(dims));
  // The kept pair j's lower and upper ends, from its D~.
  const auto ends = [&](int j) {
    const float tn = in.train_norms[col0 + columns[2 * j]];
    const float e = __fmaf_ru(__fadd_rn(qn, tn), scale, floor);
    const float approx = __int_as_float(columns[2 * j + 1]);
    return Bracket{__fsub_rd(approx, e), __fadd_ru(approx, e)};
  };
  float tau = infinity();
  if (!whole_row && n >= k && n <= kSortCap) {
    int padded = 1;
    while (padded < n) padded <<= 1;
    for (int j = static_cast<int>(threadIdx.x); j < padded; j += kThreads) uppers[j] = j < n ? ends(j).upper : infinity();
    sort_floats(uppers, padded);
    tau = uppers[k - 1];
  }
  for (int b0 = 0; b0 < n; b0 += kBatch) {
    if (threadIdx.x == 0) batch.count = 0;
    __syncthreads();  // the query row, the count, and the previous merge are in place
    const float bound_d = run_d[k - 1];
    const std::int64_t bound_i = run_i[k - 1];
    const float limit = fminf(tau, bound_d);
    for (int j = b0 + static_cast<int>(threadIdx.x); j < min(n, b0 + kBatch); j += kThreads) {
      if (!whole_row && ends(j).lower > limit) continue;  // k pairs, or the list's k-th, are closer
      const int t = col0 + (whole_row ? j : columns[2 * j]);
      const float ip = chain_inner_product(query, in.train + static_cast<std::int64_t>(t) * dims, dims);
      const float d = detail::euclidean_distance(in, r, t, ip, qn, in.train_norms[t], refine);
      if (detail::closer(d, first_index + t, bound_d, bound_i)) {
        const int at = atomicAdd(&batch.count, 1);
        batch.d[at] = d;
        batch.i[at] = t;
      }
    }
    __syncthreads();
    const int found = batch.count;
    if (found == 0) continue;
    int padded = 1;
    while (padded < found) padded <<= 1;
    for (int a = found + static_cast<int>(threadIdx.x); a < padded; a += kThreads) {
      batch.d[a] = infinity();
      batch.i[a] = detail::kNoLocal;
    }
    detail::block_bitonic_sort(batch.d, batch.i, padded);
    const float* cd = batch.d;
    const int* ci = batch.i;
    detail::merge_into(
        run_d, run_i, k, [cd](int c) { return cd[c]; }, [ci, first_index](int c) { return first_index + ci[c]; },
        min(found, k), scratch.distance + offset, scratch.index + offset);
  }
}

}  // namespace

int tensor_max_dims() { return kMaxDims; }

cudaError_t select_tensor(const DistanceInputs& in, float* slab, int rows, int cols, int ld, int col0,
                          std::int64_t first_index, Lists running, Lists scratch, int* kept, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (in.metric != Metric::euclidean || in.dims < 1 || in.dims > kMaxDims || !tensor_bound_applies(in.dims) ||
      ld < cols || running.k < 1)
    return cudaErrorInvalidValue;
  tensor_filter_kernel<<<rows, kThreads, 0, stream>>>(in, slab, cols, ld, col0, running, kept);
  const std::size_t query_bytes = static_cast<std::size_t>(in.dims) * sizeof(float);
  if (query_bytes > 48 * 1024)
    if (const cudaError_t e = cudaFuncSetAttribute(tensor_exact_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                   static_cast<int>(query_bytes));
        e != cudaSuccess)
      return e;
  tensor_exact_kernel<<<rows, kThreads, query_bytes, stream>>>(in, slab, cols, ld, col0, first_index, running,
                                                                scratch, kept);
  return cudaGetLastError();
}

}  // namespace hb::kernels::knn
