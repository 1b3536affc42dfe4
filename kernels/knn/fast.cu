// fast, block path (k > fused_warp_max_k(); smaller k take the warp path of
// fast_warp.cu): selection fused with distance finishing, so finished distances are
// never written. One block per query row of an inner-product slab. Each round, every
// thread screens kPerThread pairs with one FMA (detail::RowFinisher::may_keep),
// finishes those that pass and keeps those closer than the list's current k-th pair
// (the threshold) in a shared-memory candidate buffer; when it holds max(k, one round)
// candidates or the next round could overflow it, the buffer is flushed into the
// running list, which tightens the threshold. An empty pool starts from a threshold
// estimated on a sample of the row (sampled_bound). Any k works because the running
// list lives in global memory.
// Two flushes (kernels/knn/README.md has the measurements):
//  * pool (k up to kPoolMaxK): a radix select finds the k-th closest pair of list and
//    buffer, and the buffer's survivors take the evicted slots, so the list is an
//    unsorted pool until the chunk's last slab sorts it once. At k = 1024 the
//    block-wide bitonic sort of every merge flush (one barrier per stage, ~8 flushes a
//    row) was most of the time.
//  * merge (k above kPoolMaxK): the buffer is bitonic-sorted and merged into the sorted
//    list (merge path by binary search).
#include <algorithm>

#include "kernels/knn/detail/fast_warp.hpp"
#include "kernels/knn/detail/pair.cuh"

namespace hb::kernels::knn {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kPerThread = 4;
constexpr int kRound = kThreads * kPerThread;
constexpr int kCapacity = 4096;  // candidates: 32 KiB of shared memory
constexpr int kPoolMaxK = kCapacity;  // the final sort orders pool positions in the buffer
constexpr int kSamples = 2048;  // columns sampled for an empty list's first bound
static_assert(kCapacity >= kRound && (kCapacity & (kCapacity - 1)) == 0);

struct Buffer {
  float d[kCapacity];
  int i[kCapacity];  // chunk-local index; pool position while the pool is sorted
  int count;
};

// Radix select over 8-bit digits, most significant first: `need` is the rank (from 1)
// sought among the keys that match `prefix` under `mask`.
struct Radix {
  unsigned hist[256];
  unsigned long long prefix, mask;
  unsigned need, equal;  // equal: keys matching the whole prefix after the last pass
  unsigned freed, filled, claimed;
  float max_d[kWarps];
  std::int64_t max_i[kWarps];
  // fused_kernel's uniform values (shared memory spares the scan's registers):
  float estimate;        // an empty list's sampled bound, or +inf
  int passed;            // candidates buffered since the list was empty
  std::int64_t bound_i;  // the threshold's index
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

// Distances are >= 0 or +inf, so their bit patterns order like the values.
__device__ __forceinline__ unsigned key_bits(float d) { return __float_as_uint(d); }

// Warp 0 picks the digit holding rank `need` from the histogram and narrows the prefix.
__device__ void choose_digit(Radix& rx, int shift) {
  const int lane = static_cast<int>(threadIdx.x);
  unsigned local[8], sum = 0;
#pragma unroll
  for (int j = 0; j < 8; ++j) sum += (local[j] = rx.hist[lane * 8 + j]);
  unsigned inclusive = sum;
  for (int offset = 1; offset < 32; offset <<= 1) {
    const unsigned other = __shfl_up_sync(0xffffffffu, inclusive, offset);
    if (lane >= offset) inclusive += other;
  }
  const unsigned need = rx.need;
  __syncwarp();
  unsigned before = inclusive - sum;
  if (before < need && need <= inclusive) {
    for (int j = 0; j < 8; ++j) {
      if (before + local[j] >= need) {
        rx.prefix |= static_cast<unsigned long long>(lane * 8 + j) << shift;
        rx.mask |= 0xffull << shift;
        rx.need = need - before;
        rx.equal = local[j];
        break;
      }
      before += local[j];
    }
  }
}

// One digit of the select: `for_each_key(f)` calls f(key) for this thread's share of
// the keys taking part.
template <class ForEachKey>
__device__ void digit_pass(Radix& rx, int shift, ForEachKey for_each_key) {
  for (int a = static_cast<int>(threadIdx.x); a < 256; a += kThreads) rx.hist[a] = 0;
  __syncthreads();
  const unsigned long long prefix = rx.prefix, mask = rx.mask;
  for_each_key([&](unsigned long long key) {
    if ((key & mask) == prefix) atomicAdd(&rx.hist[(key >> shift) & 0xff], 1u);
  });
  __syncthreads();
  if (threadIdx.x < 32) choose_digit(rx, shift);
  __syncthreads();
}

// The pool's farthest pair (the filter's threshold), in every thread.
__device__ void pool_bound(const float* run_d, const std::int64_t* run_i, int k, Radix& rx, float& bound_d,
                           std::int64_t& bound_i) {
  float d = -1.0f;
  std::int64_t i = -1;
  for (int a = static_cast<int>(threadIdx.x); a < k; a += kThreads)
    if (detail::closer(d, i, run_d[a], run_i[a])) {
      d = run_d[a];
      i = run_i[a];
    }
  for (int offset = 16; offset > 0; offset >>= 1) {
    const float od = __shfl_down_sync(0xffffffffu, d, offset);
    const std::int64_t oi = __shfl_down_sync(0xffffffffu, i, offset);
    if (detail::closer(d, i, od, oi)) {
      d = od;
      i = oi;
    }
  }
  const int warp = static_cast<int>(threadIdx.x) / 32;
  __syncthreads();
  if (threadIdx.x % 32 == 0) {
    rx.max_d[warp] = d;
    rx.max_i[warp] = i;
  }
  __syncthreads();
  bound_d = rx.max_d[0];
  bound_i = rx.max_i[0];
  for (int w = 1; w < kWarps; ++w)
    if (detail::closer(bound_d, bound_i, rx.max_d[w], rx.max_i[w])) {
      bound_d = rx.max_d[w];
      bound_i = rx.max_i[w];
    }
}

// The pool (k pairs, unsorted) := the k closest of itself and the `count` buffered
// candidates; empties the buffer. Candidates evict the pool's farthest pairs in place:
// the k-th closest key is found by radix select on the distance bits, then on the
// training index among equal distances, and free slots are listed in `free_slots`.
__device__ void compact(Buffer& buf, Radix& rx, int count, std::int64_t first_index, float* run_d,
                        std::int64_t* run_i, int k, std::int64_t* free_slots) {
  if (threadIdx.x == 0) {
    rx.prefix = rx.mask = 0;
    rx.need = static_cast<unsigned>(k);
  }
  const int t = static_cast<int>(threadIdx.x);
  for (int shift = 24; shift >= 0; shift -= 8)
    digit_pass(rx, shift, [&](auto f) {
      for (int a = t; a < k; a += kThreads) f(key_bits(run_d[a]));
      for (int c = t; c < count; c += kThreads) f(key_bits(buf.d[c]));
    });
  const unsigned tau_bits = static_cast<unsigned>(rx.prefix);
  const bool by_index = rx.equal > rx.need;  // a tie on the k-th distance: lower indices first
  unsigned long long tau_index = 0;
  if (by_index) {
    __syncthreads();
    if (threadIdx.x == 0) rx.prefix = rx.mask = 0;
    for (int shift = 56; shift >= 0; shift -= 8)
      digit_pass(rx, shift, [&](auto f) {
        for (int a = t; a < k; a += kThreads)
          if (key_bits(run_d[a]) == tau_bits) f(static_cast<unsigned long long>(run_i[a]));
        for (int c = t; c < count; c += kThreads)
          if (key_bits(buf.d[c]) == tau_bits) f(static_cast<unsigned long long>(first_index + buf.i[c]));
      });
    tau_index = rx.prefix;
  }
  // Closer than the k-th key: kept. Equal to it: the first rx.need claims are kept (only
  // identical empty slots can be equal to it once the index decided).
  const auto keep = [&](float d, std::int64_t index) {
    const unsigned bits = key_bits(d);
    const auto u = static_cast<unsigned long long>(index);
    if (bits < tau_bits || (by_index && bits == tau_bits && u < tau_index)) return true;
    if (bits != tau_bits || (by_index && u != tau_index)) return false;
    return atomicAdd(&rx.claimed, 1u) < rx.need;
  };
  if (threadIdx.x == 0) rx.claimed = rx.freed = rx.filled = 0;
  __syncthreads();
  for (int a = t; a < k; a += kThreads)
    if (!keep(run_d[a], run_i[a])) free_slots[atomicAdd(&rx.freed, 1u)] = a;
  __syncthreads();
  for (int c = t; c < count; c += kThreads) {
    const std::int64_t g = first_index + buf.i[c];
    if (keep(buf.d[c], g)) {
      const std::int64_t slot = free_slots[atomicAdd(&rx.filled, 1u)];
      run_d[slot] = buf.d[c];
      run_i[slot] = g;
    }
  }
  if (threadIdx.x == 0) buf.count = 0;
  __syncthreads();
}

// Ascending bitonic sort of n (a power of two, at least 16) shared-memory (distance,
// position) pairs by before(). Each warp owns a contiguous run of pairs in every stage,
// so stages whose stride fits in it (49 of the 55 at n = 1024) need no block barrier:
// the final sort took a quarter of the pool kernel's time at k = 1024 (ncu samples).
template <class Before>
__device__ void sort_positions(float* d, int* p, int n, Before before) {
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int pairs = n / 2 / kWarps;  // a warp's pairs per stage: elements [2 pairs warp, 2 pairs (warp + 1))
  int previous = n;
  for (int size = 2; size <= n; size <<= 1)
    for (int stride = size / 2; stride > 0; previous = stride, stride >>= 1) {
      if (stride > pairs || previous > pairs) __syncthreads();
      else __syncwarp();
      for (int q = lane; q < pairs; q += 32) {
        const int pair = warp * pairs + q;
        const int a = ((pair & ~(stride - 1)) << 1) | (pair & (stride - 1));
        const int b = a + stride;
        const float da = d[a], db = d[b];
        const int pa = p[a], pb = p[b];
        if (((a & size) == 0) == before(db, pb, da, pa)) {  // out of order for this half's direction
          d[a] = db;
          d[b] = da;
          p[a] = pb;
          p[b] = pa;
        }
      }
    }
  __syncthreads();
}

// The pool, sorted into a list again (k <= kPoolMaxK): (distance, pool position) pairs
// are sorted in the buffer, the training index read only to order equal distances, and
// the list is rebuilt through `scratch`. Padding (positions k and up) sorts after the
// pool's empty slots, which equal it in distance and index.
__device__ void sort_pool(Buffer& buf, float* run_d, std::int64_t* run_i, float* scratch_d,
                          std::int64_t* scratch_i, int k) {
  int padded = 1;
  while (padded < k) padded *= 2;
  for (int a = static_cast<int>(threadIdx.x); a < padded; a += kThreads) {
    buf.d[a] = a < k ? run_d[a] : __int_as_float(0x7f800000);
    buf.i[a] = a;
  }
  const auto index_at = [=](int position) { return position < k ? run_i[position] : detail::kNoIndex; };
  sort_positions(buf.d, buf.i, padded, [=](float da, int pa, float db, int pb) {
    if (da != db) return da < db;
    const std::int64_t ia = index_at(pa), ib = index_at(pb);
    return ia < ib || (ia == ib && pa < pb);
  });
  for (int a = static_cast<int>(threadIdx.x); a < k; a += kThreads) {
    scratch_d[a] = buf.d[a];
    scratch_i[a] = run_i[buf.i[a]];
  }
  __syncthreads();
  for (int a = static_cast<int>(threadIdx.x); a < k; a += kThreads) {
    run_d[a] = scratch_d[a];
    run_i[a] = scratch_i[a];
  }
  __syncthreads();
}

// A distance within which at least k of the row's `cols` pairs are very likely to lie,
// for an empty list: the m-th closest of kSamples evenly spaced columns, m three
// standard deviations (binomial) above the k / cols share of the sample. +inf where
// that would pass more than a quarter of the columns. Filling an empty list from +inf
// passes about k (1 + ln(cols / k)) pairs, most of them in flushes that only loosely
// tighten the threshold; under the estimate about 1.7 k pass at k = 1024 of 10^5.
template <class Finish>
__device__ float sampled_bound(const float* row, const float* norms, int cols, int col0, int k, const Finish& finish,
                               Radix& rx) {
  const double share = static_cast<double>(kSamples) * k / cols;
  const int m = static_cast<int>(ceil(share + 3.0 * sqrt(share) + 2.0));
  if (m > kSamples / 4) return __int_as_float(0x7f800000);
  constexpr int kEach = kSamples / kThreads;
  float d[kEach];
#pragma unroll
  for (int j = 0; j < kEach; ++j) {
    const int c = static_cast<int>(static_cast<std::int64_t>(j * kThreads + threadIdx.x) * cols / kSamples);
    d[j] = finish(col0 + c, __ldg(row + c), __ldg(norms + c));
  }
  if (threadIdx.x == 0) {
    rx.prefix = rx.mask = 0;
    rx.need = static_cast<unsigned>(m);
  }
  for (int shift = 24; shift >= 0; shift -= 8)
    digit_pass(rx, shift, [&](auto f) {
#pragma unroll
      for (int j = 0; j < kEach; ++j) f(key_bits(d[j]));
    });
  return __uint_as_float(static_cast<unsigned>(rx.prefix));
}

// The row's slice of a [rows, k] list.
struct ListRow {
  float* d;
  std::int64_t* i;
  __device__ ListRow(const Lists& lists, int r)
      : d(lists.distance + static_cast<std::int64_t>(r) * lists.k), i(lists.index + static_cast<std::int64_t>(r) * lists.k) {}
};

// Registers are what bound the scan (at 64, the next round's loads were spilled as soon
// as they were issued), so what only a flush needs is not kept live through it: list
// rows are recomputed from the parameters, uniform values live in shared memory.
template <bool kPool>
__global__ void __launch_bounds__(kThreads, 4) fused_kernel(DistanceInputs in, const float* slab, int rows, int cols,
                                                            int ld, int col0, std::int64_t first_index, Lists running,
                                                            Lists scratch, SlabPlace place) {
  __shared__ Buffer buf;
  __shared__ Radix rx;
  const int r = static_cast<int>(blockIdx.x);
  if (r >= rows) return;
  const int k = running.k;
  const float* row = slab + static_cast<std::int64_t>(r) * ld;
  const int t = static_cast<int>(threadIdx.x);
  const float* train_norms = in.train_norms + col0;
  // A list arrives sorted at a chunk's first slab; later slabs find an unsorted pool.
  const bool sorted_on_entry = !kPool || place == SlabPlace::first || place == SlabPlace::only;
  detail::RowFinisher finish(in, r, in.query_norms[r]);
  // An empty pool is filled under a sampled estimate (pairs beyond it are skipped) and
  // filled again from +inf in the rare row where fewer than k pairs lie within it.
  float estimate = __int_as_float(0x7f800000);
  if (kPool && sorted_on_entry && ListRow(running, r).i[0] == detail::kNoIndex)
    estimate = sampled_bound(row, train_norms, cols, col0, k, finish, rx);
  if (threadIdx.x == 0) {
    buf.count = 0;
    rx.estimate = estimate;
    rx.passed = 0;
  }
  __syncthreads();
  // The threshold: pairs closer than (bound_d, rx.bound_i) are buffered.
  float bound_d;
  const auto set_bound = [&](float d, std::int64_t i) {
    if (detail::closer(rx.estimate, detail::kNoIndex, d, i)) {
      d = rx.estimate;
      i = detail::kNoIndex;  // pairs at the estimate itself pass
    }
    bound_d = d;
    finish.bound_by(d);
    if (threadIdx.x == 0) rx.bound_i = i;
    __syncthreads();
  };
  const auto list_bound = [&] {
    const ListRow list(running, r);
    float d = list.d[k - 1];
    std::int64_t i = list.i[k - 1];
    if (kPool && !sorted_on_entry) pool_bound(list.d, list.i, k, rx, d, i);
    set_bound(d, i);
  };
  list_bound();
  const auto flush_buffer = [&](int held) {
    if (threadIdx.x == 0) rx.passed += held;  // read after the flush's barriers
    const ListRow list(running, r);
    if constexpr (kPool) {
      compact(buf, rx, held, first_index, list.d, list.i, k, ListRow(scratch, r).i);
      float d;
      std::int64_t i;
      pool_bound(list.d, list.i, k, rx, d, i);
      set_bound(d, i);
    } else {
      const ListRow spare(scratch, r);
      flush(buf, held, first_index, list.d, list.i, k, spare.d, spare.i);
      set_bound(list.d[k - 1], list.i[k - 1]);
    }
  };
  const float* my_row = row + t;  // this thread's columns, kThreads apart
  const float* my_norms = train_norms + t;
  // The slab is read once: streaming loads (__ldcs) keep it from evicting the norms.
  // Rounds inside the slab skip the column checks (the scan's loads were a quarter of
  // the kernel's instructions with them).
  const auto load = [&](int base, float (&ip)[kPerThread], float (&tn)[kPerThread]) {
    if (base + kRound <= cols) {
#pragma unroll
      for (int u = 0; u < kPerThread; ++u) {
        ip[u] = __ldcs(my_row + base + u * kThreads);
        tn[u] = __ldg(my_norms + base + u * kThreads);
      }
      return;
    }
#pragma unroll
    for (int u = 0; u < kPerThread; ++u) {
      const bool inside = base + u * kThreads + t < cols;
      ip[u] = inside ? __ldcs(my_row + base + u * kThreads) : 0.0f;
      tn[u] = inside ? __ldg(my_norms + base + u * kThreads) : 0.0f;
    }
  };
  for (;;) {
    float ip[kPerThread], tn[kPerThread];
    load(0, ip, tn);
    for (int base = 0; base < cols; base += kRound) {
      float next_ip[kPerThread], next_tn[kPerThread];  // in flight through the flush and this round
      load(base + kRound, next_ip, next_tn);
      const int held = buf.count;  // same value in every thread: read between barriers
      __syncthreads();
      // Flush when the next round could overflow, and as soon as k candidates are held:
      // early flushes tighten the threshold. (One barrier a round, deciding the flush
      // with __syncthreads_or after the appends, ran 11 % slower at k = 1024.)
      if (held > kCapacity - kRound || held >= max(k, kRound)) flush_buffer(held);
#pragma unroll
      for (int u = 0; u < kPerThread; ++u) {
        const int c = base + u * kThreads + t;
        if (!finish.may_keep(ip[u], tn[u]) || c >= cols) continue;
        const float d = finish(col0 + c, ip[u], tn[u]);
        if (d < bound_d || (d == bound_d && first_index + col0 + c < rx.bound_i)) {
          const int slot = atomicAdd(&buf.count, 1);
          buf.d[slot] = d;
          buf.i[slot] = col0 + c;
        }
      }
#pragma unroll
      for (int u = 0; u < kPerThread; ++u) {
        ip[u] = next_ip[u];
        tn[u] = next_tn[u];
      }
      __syncthreads();
    }
    const int held = buf.count;
    __syncthreads();
    if (held > 0) flush_buffer(held);
    __syncthreads();
    if (rx.passed >= k || !(rx.estimate < __int_as_float(0x7f800000))) break;
    // Fewer than k pairs within the estimate: the k closest may lie beyond it. Again from +inf.
    const ListRow list(running, r);
    for (int a = t; a < k; a += kThreads) {
      list.d[a] = __int_as_float(0x7f800000);
      list.i[a] = detail::kNoIndex;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      rx.estimate = __int_as_float(0x7f800000);
      rx.passed = 0;
    }
    __syncthreads();
    set_bound(__int_as_float(0x7f800000), detail::kNoIndex);
  }
  if (kPool && (place == SlabPlace::last || place == SlabPlace::only)) {
    const ListRow list(running, r), spare(scratch, r);
    sort_pool(buf, list.d, list.i, spare.d, spare.i, k);
  }
}

}  // namespace

// The pool kernel (more registers than the merge kernel) sets the wave.
int fused_rows_per_wave() {
  int device = 0, sms = 0, blocks = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fused_kernel<true>, kThreads, 0) != cudaSuccess) {
    cudaGetLastError();
    return 512;
  }
  return std::max(1, sms * blocks);
}

int fused_pool_min_k() { return fused_warp_max_k() + 1; }
int fused_pool_max_k() { return kPoolMaxK; }

cudaError_t select_fused(const DistanceInputs& in, const float* slab, int rows, int cols, int ld, int col0,
                         std::int64_t first_index, Lists running, Lists scratch, SlabPlace place,
                         cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (running.k < 1 || scratch.k != running.k || ld < cols) return cudaErrorInvalidValue;
  if (running.k <= fused_warp_max_k())
    return detail::select_fused_warp(in, slab, rows, cols, ld, col0, first_index, running, stream);
  const auto blocks = static_cast<unsigned>(rows);
  if (running.k >= fused_pool_min_k() && running.k <= kPoolMaxK)
    fused_kernel<true><<<blocks, kThreads, 0, stream>>>(in, slab, rows, cols, ld, col0, first_index, running, scratch,
                                                        place);
  else
    fused_kernel<false><<<blocks, kThreads, 0, stream>>>(in, slab, rows, cols, ld, col0, first_index, running,
                                                         scratch, place);
  return cudaGetLastError();
}

}  // namespace hb::kernels::knn
