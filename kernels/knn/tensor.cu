// tensor: exact k-selection from a slab of TF32 tensor-core inner products. Two kernels,
// one block per query row each:
//  * filter: every pair's distance D~ is expanded from the approximate inner product
//    and bracketed by the proven bound E (tensor_bound.hpp), whose scale holds the two
//    rows' own shares of their rounding to TF32: [D~ - E, D~ + E] holds the FP32
//    distance the exact methods compute. The row keeps every pair whose lower end
//    is at most T = min(the running list's k-th distance, tau), where tau is the k-th
//    smallest upper end: sampled (the m-th of 2048 evenly spaced columns, m above the
//    sample's expected count of k) and checked in the same pass (at least k upper ends
//    must lie at or below it; else the row is rescanned whole). Each pair is first
//    screened with one FMA against a limit of the row (tensor_bound.hpp): only the few
//    that pass are bracketed. The kept pairs
//    (column, D~) are written over the row itself: the write position never passes the
//    columns read (a row that keeps more than half its columns is rescanned whole).
//    Where the search hands it a whole-chunk bound that a count proved (near the chunk's
//    k-th upper end, with at least k pairs of the chunk within it: tensor_chunk_bound),
//    that bound is tau and nothing is checked; a row whose pairs that count pass kept
//    is not filtered at all.
//  * exact: where a row kept k to kSortCap pairs, the k-th smallest upper end among
//    them (at least k pairs lie within it) tightens tau (the proven whole-chunk bound,
//    or none); each pair whose
//    lower end is within the threshold has its inner product computed again in FP32,
//    band order, one FMA a band (cuBLAS SGEMM's rounding: a chain of FMAs from 0), a
//    thread a pair with its row's loads 8 ahead (from k = 256 a warp's rows staged
//    through shared memory), and is finished by the exact methods'
//    rule (detail::euclidean_distance, FP64 recompute included); pairs closer than the
//    running k-th are buffered, sorted and merged into the running list
//    (detail::merge_into), batch by batch.
// Euclidean only; the search runs `fast` for cosine.
#include <algorithm>
#include <cmath>

#include "kernels/detail/async_copy.cuh"
#include "kernels/knn/detail/pair.cuh"
#include "kernels/knn/tensor_bound.hpp"

namespace hb::kernels::knn {
namespace {

constexpr int kThreads = 256;
constexpr int kPerThread = 8;  // loads in flight a thread between the filter's barriers
constexpr int kRound = kThreads * kPerThread;
constexpr int kSamples = 2048;  // columns sampled for tau (8 KiB of shared memory)
constexpr int kBatch = 2048;    // exact distances per flush (16 KiB of shared memory)
constexpr int kSortCap = 4096;  // kept pairs whose upper ends the exact kernel selects from (16 KiB)
constexpr int kMaxDims = 8192;  // the query row in shared memory (32 KiB)
constexpr int kChunkSamples = 4096;  // the most a whole-chunk bound is sampled from (16 KiB)
constexpr int kFront = kChunkSamples / 4;  // samples at or below its tau (m <= samples / 4)
constexpr int kPairCap = 4096;  // pairs a row's whole-chunk count pass keeps (32 KiB a row)

__device__ __forceinline__ float infinity() { return __int_as_float(0x7f800000); }

struct Bracket {
  float lower, upper;
};

// [D~ - E, D~ + E], rounded outward; NaN or infinite where the norms overflow (such a
// pair is always kept: !(lower > T)).
// D~ = fl(|q|^2 + |t|^2 - 2 ip~), what a kept pair carries to the exact stage.
__device__ __forceinline__ float approx_distance(float ip, float qn, float tn) {
  return __fsub_rn(__fadd_rn(qn, tn), __fmul_rn(2.0f, ip));
}

// [D~ - E, D~ + E] from a pair's D~.
__device__ __forceinline__ Bracket bracket_of(float approx, float qn, float tn, float scale, float floor) {
  const float e = __fmaf_ru(__fadd_rn(qn, tn), scale, floor);
  return {__fsub_rd(approx, e), __fadd_ru(approx, e)};
}

__device__ __forceinline__ Bracket bracket(float ip, float qn, float tn, float scale, float floor) {
  return bracket_of(approx_distance(ip, qn, tn), qn, tn, scale, floor);
}

// Row r's scale for every pair of the chunk: the rest of the scale, the row's own share
// and the chunk's largest share, summed rounding up (tensor_bound.hpp). The largest
// share in place of each training row's own: about 1.2-1.3 times a typical one on
// uniform values and spectra, and no load a pair.
__device__ __forceinline__ float row_scale(int dims, const RoundingShares& shares, int r) {
  return __fadd_ru(__fadd_ru(tensor_error_scale_f(dims), shares.query[r]), *shares.train_max);
}

// Where a selection keeps its digit histogram and the digit it chose.
struct Select {
  unsigned hist[256];
  unsigned digit, need;
};

// The m-th smallest (from 1, m <= n) of n upper ends in shared memory, block-wide: four
// histogram passes over the bits, 8 at a time from the top (upper ends are at least 0,
// where a float's bits order as its value; a NaN, or a negative value the bound rules
// out, orders last: that only makes tau larger, which keeps more pairs). A bitonic sort of the
// 2048 samples, 66 barrier stages a row, had become the filter's largest cost once the
// screen made its scan cheap.
__device__ float select_upper(const float* uppers, int n, int m, Select& sel) {
  unsigned prefix = 0, mask = 0, need = static_cast<unsigned>(m);
  for (int shift = 24; shift >= 0; shift -= 8) {
    for (int a = static_cast<int>(threadIdx.x); a < 256; a += kThreads) sel.hist[a] = 0;
    __syncthreads();
    for (int a = static_cast<int>(threadIdx.x); a < n; a += kThreads) {
      const unsigned key = __float_as_uint(uppers[a]);
      if ((key & mask) == prefix) atomicAdd(&sel.hist[(key >> shift) & 0xffu], 1u);
    }
    __syncthreads();
    if (threadIdx.x < 32) {  // a warp scans the 256 counts, 8 a lane
      const int lane = static_cast<int>(threadIdx.x);
      unsigned sum = 0;
      for (int b = 0; b < 8; ++b) sum += sel.hist[8 * lane + b];
      unsigned inclusive = sum;
      for (int offset = 1; offset < 32; offset <<= 1) {
        const unsigned v = __shfl_up_sync(0xffffffffu, inclusive, offset);
        if (lane >= offset) inclusive += v;
      }
      unsigned before = inclusive - sum;
      if (before < need && inclusive >= need) {
        int b = 0;
        while (before + sel.hist[8 * lane + b] < need) before += sel.hist[8 * lane + b++];
        sel.digit = static_cast<unsigned>(8 * lane + b);
        sel.need = need - before;
      }
    }
    __syncthreads();
    prefix |= sel.digit << shift;
    mask |= 0xffu << shift;
    need = sel.need;
  }
  return __uint_as_float(prefix);
}

// tau for an empty (not yet full) list: the m-th smallest upper end of a sample, every
// column where the row has at most kSamples; +inf where the sample could not say.
// The rank among n samples spread over `cols` columns whose upper end bounds the k-th
// pair: k where every column is sampled, else above the sample's expected count of k
// by three standard deviations and 2; 0 where no rank can say (m > n / 4, or k > n).
__device__ int sample_rank(int k, int n, int cols) {
  if (cols <= n) return k <= n ? k : 0;
  const double mean = static_cast<double>(k) * n / cols;
  const int m = static_cast<int>(ceil(mean + 3.0 * sqrt(mean) + 2.0));
  return m <= n / 4 ? m : 0;
}

__device__ float sampled_tau(const float* row, const float* train_norms, int col0, int cols, int k, float qn,
                             float scale, float floor, float* samples, Select& sel) {
  const int n = min(cols, kSamples);
  const int m = sample_rank(k, n, cols);
  if (m == 0) return infinity();
  for (int i = static_cast<int>(threadIdx.x); i < n; i += kThreads) {
    const int c = static_cast<int>(static_cast<std::int64_t>(i) * cols / n);
    samples[i] = bracket(row[c], qn, train_norms[col0 + c], scale, floor).upper;
  }
  __syncthreads();
  return select_upper(samples, n, m, sel);
}

// One block per row: the kept pairs (column, D~ bits) of row r over the row's start,
// their count in kept[2r]; kept[2r + 1] = 1 where the sampled tau failed its check or
// the pairs would not fit (rescan the row whole). Each pair is first screened with one
// FMA (tensor_bound.hpp); only the few that pass are bracketed, each by its own lane.
// A row whose pairs the bound's count pass kept (kept[2r + 1] = 2) is left alone.
__global__ void __launch_bounds__(kThreads) tensor_filter_kernel(DistanceInputs in, RoundingShares shares,
                                                                 float* slab, int cols, int ld, int col0,
                                                                 Lists running, int* kept, ChunkBound chunk) {
  __shared__ float samples[kSamples];
  __shared__ Select sel;
  __shared__ int kept_count;
  __shared__ int below_tau;
  __shared__ int overflow;
  const int r = static_cast<int>(blockIdx.x);
  if (chunk.pairs != nullptr && kept[2 * r + 1] == 2) return;  // kept by the bound's count pass
  const int k = running.k;
  float* row = slab + static_cast<std::int64_t>(r) * ld;
  const float qn = in.query_norms[r];
  const float scale = row_scale(in.dims, shares, r);
  const float floor = static_cast<float>(tensor_error_floor(in.dims));
  const float list_bound = running.distance[static_cast<std::int64_t>(r) * k + k - 1];
  if (threadIdx.x == 0) {
    kept_count = 0;
    below_tau = 0;
    overflow = 0;
  }
  // A whole-chunk bound proven by its count (tensor_chunk_bound) needs no check here.
  const float proven = chunk.bound != nullptr && chunk.count[r] >= k ? chunk.bound[r] : infinity();
  const bool sampled = proven == infinity() && list_bound == infinity() && cols >= k;
  const float tau =
      sampled ? sampled_tau(row, in.train_norms, col0, cols, k, qn, scale, floor, samples, sel) : proven;
  const float limit = fminf(list_bound, tau);
  // Every pair kept (lower end <= limit) or counted (upper end <= tau) passes the screen.
  const float largest = in.train_norm_max ? *in.train_norm_max : infinity();
  const float screen =
      __double2float_ru(tensor_screen_limit(tau != infinity() ? tau : limit, qn, largest, scale, in.dims));
  const float* norms = in.train_norms + col0;
  int* out = reinterpret_cast<int*>(row);
  int mine_below = 0;
  for (int base = 0; base < cols; base += kRound) {
    float ip[kPerThread], tn[kPerThread];
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int c = base + j * kThreads + static_cast<int>(threadIdx.x);
      ip[j] = c < cols ? row[c] : 0.0f;
      tn[j] = c < cols ? norms[c] : 0.0f;
    }
    __syncthreads();  // this round read whole before any kept pair is written into it
    const int writable = min(cols, base + kRound);  // words read so far
#pragma unroll
    for (int j = 0; j < kPerThread; ++j) {
      const int c = base + j * kThreads + static_cast<int>(threadIdx.x);
      if (c >= cols || __fmaf_rn(-2.0f, ip[j], tn[j]) > screen) continue;
      const Bracket b = bracket(ip[j], qn, tn[j], scale, floor);
      mine_below += b.upper <= tau;
      if (b.lower > limit) continue;
      const int slot = 2 * atomicAdd(&kept_count, 1);
      if (slot + 1 < writable) {
        out[slot] = c;
        row[slot + 1] = approx_distance(ip[j], qn, tn[j]);
      } else {
        overflow = 1;
      }
    }
  }
  if (sampled && tau != infinity()) atomicAdd(&below_tau, mine_below);
  __syncthreads();
  if (threadIdx.x == 0) {
    kept[2 * r] = kept_count;
    kept[2 * r + 1] = (sampled && tau != infinity() && below_tau < k) || overflow;
  }
}

// The column of sample i of a whole-chunk bound: runs of kSampleRun adjacent columns,
// `stride` apart, so that a run's loads share a 32-byte sector (8192 samples one
// column each, 12 apart, had read two thirds of a row's bytes in sectors).
constexpr int kSampleRun = 8;
__device__ __forceinline__ std::int64_t sample_column(int i, int stride) {
  return static_cast<std::int64_t>(i / kSampleRun) * stride + i % kSampleRun;
}

// The rank among n samples of `cols` columns below which the k-th pair's upper end
// rarely lies: the sample's expected count of k less three standard deviations and 2,
// at least 1. It opens the range that the count pass refines tau in.
__device__ int lower_sample_rank(int k, int n, int cols) {
  const double mean = static_cast<double>(k) * n / cols;
  return max(1, static_cast<int>(floor(mean - 3.0 * sqrt(mean) - 2.0)));
}

constexpr int kRefineBins = 256;

// Upper ends in (lo, tau] (both finite, 0 <= lo < tau) fall into kRefineBins bins of
// equal width in their bits; bin b holds those at most bin_top(b).
struct Refine {
  unsigned lo_key = 0, width = 0;  // width 0: no refinement
  __device__ Refine(float lo, float tau) {
    const unsigned lo_bits = __float_as_uint(lo), tau_bits = __float_as_uint(tau);
    if (lo >= 0.0f && lo < tau && tau != infinity()) {
      lo_key = lo_bits;
      width = (tau_bits - lo_bits + kRefineBins - 1) / kRefineBins;
    }
  }
  __device__ int bin(float upper) const { return static_cast<int>((__float_as_uint(upper) - lo_key - 1) / width); }
  __device__ float bin_top(int b, float tau) const {
    return fminf(__uint_as_float(lo_key + static_cast<unsigned>(b + 1) * width), tau);
  }
};

struct Choice {
  int bins;   // taken from the bottom: 0, lo bounds k pairs; b > 0, the top of bin b - 1
  int count;  // the pairs within that bound
};

// Warp 0: of `total` (at least k) pairs within tau, those above lo in `bins`, the fewest
// bins from the bottom whose pairs, with those at or below lo, number at least k.
__device__ Choice first_bin_holding(const unsigned* bins, int total, int k) {
  const int lane = static_cast<int>(threadIdx.x);
  constexpr int kPerLane = kRefineBins / 32;
  int sum = 0;
  for (int b = 0; b < kPerLane; ++b) sum += static_cast<int>(bins[kPerLane * lane + b]);
  int inclusive = sum;
  for (int offset = 1; offset < 32; offset <<= 1) {
    const int v = __shfl_up_sync(0xffffffffu, inclusive, offset);
    if (lane >= offset) inclusive += v;
  }
  const int below_lo = total - __shfl_sync(0xffffffffu, inclusive, 31);
  if (below_lo >= k) return {0, below_lo};
  int at = below_lo + inclusive - sum;  // pairs below this lane's bins
  const bool crosses = at < k && at + sum >= k;
  const unsigned crossing = __ballot_sync(0xffffffffu, crosses);
  if (crossing == 0) return {kRefineBins, total};  // not reached: the bins hold total - below_lo
  Choice choice{kRefineBins, total};
  if (crosses) {
    int b = 0;
    while (at < k) at += static_cast<int>(bins[kPerLane * lane + b++]);
    choice = {kPerLane * lane + b, at};
  }
  const int from = __ffs(static_cast<int>(crossing)) - 1;
  return {__shfl_sync(0xffffffffu, choice.bins, from), __shfl_sync(0xffffffffu, choice.count, from)};
}

// A whole-chunk bound for row r, from its TF32 inner products with every training row
// of the chunk. Sampled: tau, the m-th smallest upper end among `samples` columns
// (sample_column; m = sample_rank for the whole chunk; +inf where the sample cannot
// say), and lo, the lower_sample_rank-th. Then one pass over the chunk counts the
// pairs whose upper end is at most tau (each pair first screened with one FMA, as in
// the filter) and bins those above lo; the bound is the top of the first bin at which
// k pairs lie within it (lo where k lie at or below lo; tau where the bins cannot
// refine), and its count the pairs within it. A row with at least k holds a proven
// bound, near its k-th pair's upper end rather than the sample's margin above it. With
// chunk.pairs, the same pass keeps the pairs the filter would keep under tau (their
// lower end within min(tau, the list's k-th)), so that a proven row is not read again.
__global__ void __launch_bounds__(kThreads) tensor_chunk_bound_kernel(DistanceInputs in, RoundingShares shares,
                                                                      const float* products, int cols, int ld,
                                                                      int samples, int stride, Lists running,
                                                                      int* kept, ChunkBound chunk) {
  __shared__ float uppers[kChunkSamples];
  __shared__ float front[kFront];
  __shared__ Select sel;
  __shared__ unsigned bins[kRefineBins];
  __shared__ int total, kept_count;
  const int r = static_cast<int>(blockIdx.x);
  const int k = running.k;
  const float* row = products + static_cast<std::int64_t>(r) * ld;
  const float qn = in.query_norms[r];
  const float scale = row_scale(in.dims, shares, r);
  const float floor = static_cast<float>(tensor_error_floor(in.dims));
  const int m = sample_rank(k, samples, cols);
  if (threadIdx.x == 0) {
    total = 0;
    kept_count = 0;
  }
  for (int b = static_cast<int>(threadIdx.x); b < kRefineBins; b += kThreads) bins[b] = 0;
  float tau = infinity(), lo = infinity();
  if (m > 0) {  // the same for every thread of the block
    for (int i = static_cast<int>(threadIdx.x); i < samples; i += kThreads) {
      const std::int64_t c = sample_column(i, stride);
      uppers[i] = bracket(row[c], qn, in.train_norms[c], scale, floor).upper;
    }
    __syncthreads();
    tau = select_upper(uppers, samples, m, sel);
    // lo among the m or so samples at or below tau, gathered first: the build that
    // selected it among all the samples ran k = 128 slower than before the refinement.
    if (threadIdx.x == 0) total = 0;
    __syncthreads();
    for (int i = static_cast<int>(threadIdx.x); i < samples; i += kThreads)
      if (uppers[i] <= tau) {
        const int at = atomicAdd(&total, 1);
        if (at < kFront) front[at] = uppers[i];
      }
    __syncthreads();
    const int gathered = total;
    if (gathered <= kFront) lo = select_upper(front, gathered, min(m, lower_sample_rank(k, samples, cols)), sel);
    if (threadIdx.x == 0) total = 0;
  }
  __syncthreads();
  const Refine refine(lo, tau);
  const float limit = fminf(running.distance[static_cast<std::int64_t>(r) * k + k - 1], tau);
  int* pairs = chunk.pairs ? chunk.pairs + static_cast<std::int64_t>(r) * 2 * kPairCap : nullptr;
  int mine = 0;
  if (tau != infinity()) {
    const float largest = in.train_norm_max ? *in.train_norm_max : infinity();
    const float screen = __double2float_ru(tensor_screen_limit(tau, qn, largest, scale, in.dims));
    const auto visit = [&](int c, float ip, float tn) {
      if (__fmaf_rn(-2.0f, ip, tn) > screen) return;
      const Bracket b = bracket(ip, qn, tn, scale, floor);
      if (b.upper <= tau) {
        ++mine;
        if (refine.width != 0 && b.upper > lo) atomicAdd(&bins[refine.bin(b.upper)], 1u);
      }
      if (pairs == nullptr || b.lower > limit) return;  // as the filter keeps a pair
      const int slot = atomicAdd(&kept_count, 1);
      if (slot < kPairCap)
        reinterpret_cast<int2*>(pairs)[slot] = make_int2(c, __float_as_int(approx_distance(ip, qn, tn)));
    };
    // Four columns a load where the row and the norms are whole float4s (the search pads
    // a slab's rows to them): against a column a load, H100, d = 224, two rounds in one
    // call, k = 10 2.26 -> 2.46-2.47 M queries/s, k = 100 2.06-2.07 -> 2.25 M, k = 1024
    // 1.13-1.14 -> 1.20 M. It had moved 1.6 TB/s, 48 % of the DRAM's peak, stalled on its
    // loads (ncu); in one build either way, 6.1 against 3.7 ms at k = 1024 (8192 queries).
    int c0 = 0;
    const auto whole_quads = [](const float* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0; };
    if (whole_quads(row) && whole_quads(in.train_norms)) {
      const auto* row4 = reinterpret_cast<const float4*>(row);
      const auto* norms4 = reinterpret_cast<const float4*>(in.train_norms);
      for (int i = static_cast<int>(threadIdx.x); i < cols / 4; i += kThreads) {
        const float4 ip = row4[i], tn = norms4[i];
        visit(4 * i, ip.x, tn.x);
        visit(4 * i + 1, ip.y, tn.y);
        visit(4 * i + 2, ip.z, tn.z);
        visit(4 * i + 3, ip.w, tn.w);
      }
      c0 = cols / 4 * 4;
    }
    for (int c = c0 + static_cast<int>(threadIdx.x); c < cols; c += kThreads) visit(c, row[c], in.train_norms[c]);
  }
  if (mine > 0) atomicAdd(&total, mine);
  __syncthreads();
  if (threadIdx.x < 32) {
    const bool refines = refine.width != 0 && total >= k;
    const Choice choice = refines ? first_bin_holding(bins, total, k) : Choice{kRefineBins, total};
    if (threadIdx.x == 0) {
      chunk.bound[r] = !refines ? tau : choice.bins == 0 ? lo : refine.bin_top(choice.bins - 1, tau);
      chunk.count[r] = choice.count;
      const bool finished_here = pairs != nullptr && choice.count >= k && kept_count <= kPairCap;
      kept[2 * r] = kept_count;
      kept[2 * r + 1] = finished_here ? 2 : 0;
    }
  }
}

// q . t in FP32, band order, one FMA a band from 0. A thread gathers its row alone: a
// warp loading 32 rows' bands coalesced into a shared tile for 32 chains at once ran
// slower at k >= 100 (H200, d = 224, k = 1024: 0.28 against 0.41 M queries/s). The
// row's float4 loads are issued kAhead at a time before their FMAs, so that a chain
// waits for memory once a batch rather than once a load. Measured with the pairs
// compacted (Work, below), H200, d = 224, one call: 8 ahead ran 6-14 % faster than 1
// for k = 10 to 4096; 14 or 28 ahead (more registers, fewer rows resident) no faster
// than the code before both changes; two or four rows' chains a thread side by side
// slower (a row's pairs then fill fewer threads). Batches are whole and the last loads
// go one at a time: every load predicated on the row's end instead took 40 registers
// for 46 and ran 6-24 % slower than the code before (its own call), and the kernel held
// to 40 registers (__launch_bounds__ minimum of 6 blocks an SM, for 5) 2-21 % slower.
constexpr int kAhead = 8;

// acc after four more links of the chain: q[0..3] times v's x, y, z, w, in that order.
__device__ __forceinline__ float chain_quad(float acc, const float* q, float4 v) {
  acc = __fmaf_rn(q[0], v.x, acc);
  acc = __fmaf_rn(q[1], v.y, acc);
  acc = __fmaf_rn(q[2], v.z, acc);
  return __fmaf_rn(q[3], v.w, acc);
}

__device__ __forceinline__ float chain_inner_product(const float* q, const float* t, int dims) {
  float acc = 0.0f;
  if ((dims & 3) == 0 && (reinterpret_cast<std::uintptr_t>(t) & 15) == 0) {
    const float4* t4 = reinterpret_cast<const float4*>(t);
    const int quads = dims / 4;
    int i = 0;
    for (; i + kAhead <= quads; i += kAhead) {
      float4 v[kAhead];
#pragma unroll
      for (int a = 0; a < kAhead; ++a) v[a] = __ldg(t4 + i + a);
#pragma unroll
      for (int a = 0; a < kAhead; ++a) acc = chain_quad(acc, q + 4 * (i + a), v[a]);
    }
    for (; i < quads; ++i) acc = chain_quad(acc, q + 4 * i, __ldg(t4 + i));
    return acc;
  }
  for (int i = 0; i < dims; ++i) acc = __fmaf_rn(q[i], __ldg(t + i), acc);
  return acc;
}

// From k = kStagedFromK a block's pairs are many, and the training rows of a warp's 32
// pairs cross to shared memory kStageBands bands of each row a piece, two pieces in
// flight (cp.async, through the L2 only). A copy instruction of the warp takes 8 rows'
// 64-byte pieces whole, where each lane's own float4 load of its row touches 32 rows
// an instruction and kept the L1 busy with 16 useful bytes a wavefront. The chain is
// unchanged (band order, one FMA a band from 0), so the bits are chain_inner_product's.
// Measured against the per-lane loads, H200, d = 224, two rounds in one call: k = 256
// 1.87 -> 1.91 M queries/s, k = 1024 1.10 -> 1.21 M, k = 4096 0.43 -> 0.50 M; d = 32:
// k = 256 1.94 -> 2.04 M, k = 1024 1.22 -> 1.27 M. Below k = 256 fewer blocks an SM
// (three for five: the stages take 40 KiB) cost more than the loads save (k = 10 2.46
// -> 2.42 M, k = 100 2.25 -> 2.22 M); 8 bands a piece ran 1-2 % slower than 16 at
// k >= 1024, and 32 bands (two blocks an SM) 8 % slower.
constexpr int kStagedFromK = 256;
constexpr int kStageBands = 16;
constexpr int kStageStride = kStageBands + 4;  // floats a staged row: 16-byte aligned, conflict-free float4 reads
constexpr int kLanesPerRow = kStageBands / 4;  // lanes that copy a row's piece, 16 bytes each
constexpr int kRowsPerCopy = 32 / kLanesPerRow;
constexpr int kWarpStageFloats = 2 * 32 * kStageStride;

// Shared memory a block's stages take, at least the upper ends' (which they overlay,
// being selected from before any pair is staged); none where pairs are not staged.
template <bool kStaged>
constexpr std::size_t stage_block_bytes() {
  if constexpr (!kStaged) return 0;
  return std::max(static_cast<std::size_t>(kThreads / 32) * kWarpStageFloats, std::size_t{kSortCap}) * sizeof(float);
}

// acc += q[i] x[i] over `quads` float4s of x, in order, one FMA a band.
__device__ __forceinline__ float chain_quads(float acc, const float* q, const float4* x, int quads) {
  if (quads == kLanesPerRow) {
#pragma unroll
    for (int i = 0; i < kLanesPerRow; ++i) acc = chain_quad(acc, q + 4 * i, x[i]);
  } else {
    for (int i = 0; i < quads; ++i) acc = chain_quad(acc, q + 4 * i, x[i]);
  }
  return acc;
}

// This lane's q . t for its training row `row` (-1: none; the lane still copies for the
// others), every lane of the warp calling with its own row. dims % 4 == 0 and `train`
// 16-byte aligned; `stage` is the warp's kWarpStageFloats.
__device__ float staged_inner_product(const float* q, const float* train, int row, int dims, float* stage) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const int quad = lane % kLanesPerRow;
  int rows[kLanesPerRow];  // copy instruction j takes rows kRowsPerCopy j to kRowsPerCopy (j + 1) - 1
#pragma unroll
  for (int j = 0; j < kLanesPerRow; ++j)
    rows[j] = __shfl_sync(0xffffffffu, row, kRowsPerCopy * j + lane / kLanesPerRow);
  const auto issue = [&](int piece) {
    float* to = stage + (piece & 1) * 32 * kStageStride + (lane / kLanesPerRow) * kStageStride + 4 * quad;
    const int band = piece * kStageBands + 4 * quad;
#pragma unroll
    for (int j = 0; j < kLanesPerRow; ++j)
      if (rows[j] >= 0 && band < dims)
        async_copy::to_shared(to + kRowsPerCopy * j * kStageStride,
                              train + static_cast<std::int64_t>(rows[j]) * dims + band);
    async_copy::commit();
  };
  const int pieces = (dims + kStageBands - 1) / kStageBands;
  issue(0);
  float acc = 0.0f;
  for (int piece = 0; piece < pieces; ++piece) {
    if (piece + 1 < pieces) {
      issue(piece + 1);
      async_copy::wait<1>();
    } else {
      async_copy::wait<0>();
    }
    __syncwarp();  // every lane's copies of this piece landed
    if (row >= 0) {
      const auto* mine = reinterpret_cast<const float4*>(stage + (piece & 1) * 32 * kStageStride + lane * kStageStride);
      acc = chain_quads(acc, q + piece * kStageBands, mine, min(kStageBands, dims - piece * kStageBands) / 4);
    }
    __syncwarp();  // this piece read whole before its buffer takes the piece after next
  }
  return acc;
}

struct Batch {
  float d[kBatch];
  int i[kBatch];  // chunk-local training index
  int count;
};

// A batch's pairs that the bound cannot rule out, as chunk-local training rows: gathered
// first, so that all of a block's threads run chains. With one load ahead this alone ran
// 2-5 % slower at k = 100 and 1024 than a thread per kept pair, idle where its pair is
// ruled out; with 8 ahead it gives the gains above.
struct Work {
  int t[kBatch];
  int count;
};

// The kept pairs of row r finished exactly and merged: those the filter wrote over the
// slab row, those the bound's count pass kept where kept[2r + 1] is 2, every column
// where it is 1.
template <bool kStaged>
__global__ void __launch_bounds__(kThreads) tensor_exact_kernel(DistanceInputs in, RoundingShares shares,
                                                                const float* slab, int cols, int ld, int col0,
                                                                std::int64_t first_index, Lists running,
                                                                Lists scratch, const int* kept, ChunkBound chunk) {
  extern __shared__ float4 dynamic[];  // the warps' stages (where staged), then the query row
  float* query = reinterpret_cast<float*>(dynamic) + stage_block_bytes<kStaged>() / sizeof(float);
  __shared__ Batch batch;
  __shared__ union {  // the upper ends are selected from before any batch's work
    float uppers[kStaged ? 1 : kSortCap];  // staged: over the stages
    Work work;
  } room;
  __shared__ Select sel;
  float* uppers = kStaged ? reinterpret_cast<float*>(dynamic) : room.uppers;
  Work& work = room.work;
  const int r = static_cast<int>(blockIdx.x);
  const int k = running.k;
  const int dims = in.dims;
  for (int b = static_cast<int>(threadIdx.x); b < dims; b += kThreads)
    query[b] = in.queries[static_cast<std::int64_t>(r) * dims + b];
  const bool whole_row = kept[2 * r + 1] == 1;
  const int* columns = kept[2 * r + 1] == 2 ? chunk.pairs + static_cast<std::int64_t>(r) * 2 * kPairCap
                                            : reinterpret_cast<const int*>(slab + static_cast<std::int64_t>(r) * ld);
  const int n = whole_row ? cols : kept[2 * r];
  const auto offset = static_cast<std::int64_t>(r) * k;
  float* run_d = running.distance + offset;
  std::int64_t* run_i = running.index + offset;
  const float qn = in.query_norms[r];
  const float refine = detail::refine_below(dims);
  const float scale = row_scale(dims, shares, r);
  const float floor = static_cast<float>(tensor_error_floor(dims));
  const bool staged = kStaged && (dims & 3) == 0 && (reinterpret_cast<std::uintptr_t>(in.train) & 15) == 0;
  // The kept pair j's lower and upper ends, from its D~.
  const auto ends = [&](int j) {
    const float tn = in.train_norms[col0 + columns[2 * j]];
    return bracket_of(__int_as_float(columns[2 * j + 1]), qn, tn, scale, floor);
  };
  float tau = chunk.bound != nullptr && chunk.count[r] >= k ? chunk.bound[r] : infinity();
  if (!whole_row && n >= k && n <= kSortCap) {
    for (int j = static_cast<int>(threadIdx.x); j < n; j += kThreads) uppers[j] = ends(j).upper;
    __syncthreads();
    tau = fminf(tau, select_upper(uppers, n, k, sel));
  }
  for (int b0 = 0; b0 < n; b0 += kBatch) {
    if (threadIdx.x == 0) {
      batch.count = 0;
      work.count = 0;
    }
    __syncthreads();  // the query row, the counts, and the previous merge are in place
    const float bound_d = run_d[k - 1];
    const std::int64_t bound_i = run_i[k - 1];
    const float limit = fminf(tau, bound_d);
    for (int j = b0 + static_cast<int>(threadIdx.x); j < min(n, b0 + kBatch); j += kThreads) {
      if (!whole_row && ends(j).lower > limit) continue;  // k pairs, or the list's k-th, are closer
      work.t[atomicAdd(&work.count, 1)] = col0 + (whole_row ? j : columns[2 * j]);
    }
    __syncthreads();
    const int m = work.count;
    const auto finish = [&](int t, float ip) {
      const float d = detail::euclidean_distance(in, r, t, ip, qn, in.train_norms[t], refine);
      if (detail::closer(d, first_index + t, bound_d, bound_i)) {
        const int at = atomicAdd(&batch.count, 1);
        batch.d[at] = d;
        batch.i[at] = t;
      }
    };
    if (staged) {
      float* stage = reinterpret_cast<float*>(dynamic) + (threadIdx.x / 32) * kWarpStageFloats;
      for (int a0 = static_cast<int>(threadIdx.x / 32) * 32; a0 < m; a0 += kThreads) {  // the same in a warp
        const int a = a0 + static_cast<int>(threadIdx.x % 32);
        const int t = a < m ? work.t[a] : -1;
        const float ip = staged_inner_product(query, in.train, t, dims, stage);
        if (t >= 0) finish(t, ip);
      }
    } else {
      for (int a = static_cast<int>(threadIdx.x); a < m; a += kThreads) {
        const int t = work.t[a];
        finish(t, chain_inner_product(query, in.train + static_cast<std::int64_t>(t) * dims, dims));
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

// Rows rounded to TF32 by nearest, ties away from zero (10 stored bits), a warp a row,
// with the row's share of the bound's scale from its rounding errors (the order of the
// FP64 sums only moves them by far less than the share's slack).
__global__ void tensor_round_rows_kernel(const float* in, float* out, std::int64_t rows, int dims, float* share) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t r = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / 32; r < rows;
       r += warps) {
    double err2 = 0.0, norm2 = 0.0;
    for (int b = lane; b < dims; b += 32) {
      const std::int64_t i = r * dims + b;
      const float x = in[i];
      unsigned bits = 0;
      asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(bits) : "f"(x));
      out[i] = __uint_as_float(bits);
      const double e = static_cast<double>(__uint_as_float(bits)) - static_cast<double>(x);  // exact
      err2 = fma(e, e, err2);
      norm2 = fma(static_cast<double>(x), static_cast<double>(x), norm2);
    }
    for (int offset = 16; offset > 0; offset >>= 1) {
      err2 += __shfl_down_sync(0xffffffffu, err2, offset);
      norm2 += __shfl_down_sync(0xffffffffu, norm2, offset);
    }
    if (lane == 0) share[r] = __double2float_ru(tensor_rounding_share(err2, norm2));
  }
}

}  // namespace

cudaError_t tensor_round_rows(const float* in, float* out, std::int64_t rows, int dims, float* share,
                              cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  if (dims < 1) return cudaErrorInvalidValue;
  constexpr int kRowsPerBlock = kThreads / 32;
  const auto blocks = static_cast<int>(std::min<std::int64_t>((rows + kRowsPerBlock - 1) / kRowsPerBlock, 65536));
  tensor_round_rows_kernel<<<blocks, kThreads, 0, stream>>>(in, out, rows, dims, share);
  return cudaGetLastError();
}

int tensor_max_dims() { return kMaxDims; }

int tensor_bound_samples() { return kChunkSamples; }

int tensor_sample_run() { return kSampleRun; }

int tensor_pair_capacity() { return kPairCap; }

cudaError_t tensor_chunk_bound(const DistanceInputs& in, const RoundingShares& shares, const float* products,
                               int rows, int cols, int ld, int samples, int stride, Lists running, int* kept,
                               ChunkBound chunk, cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  if (samples < kSampleRun || samples > kChunkSamples || samples % kSampleRun != 0 || stride < kSampleRun ||
      static_cast<std::int64_t>(samples / kSampleRun - 1) * stride + kSampleRun > cols || ld < cols ||
      running.k < 1 || chunk.bound == nullptr || chunk.count == nullptr || kept == nullptr ||
      shares.query == nullptr || shares.train_max == nullptr)
    return cudaErrorInvalidValue;
  tensor_chunk_bound_kernel<<<rows, kThreads, 0, stream>>>(in, shares, products, cols, ld, samples, stride, running,
                                                           kept, chunk);
  return cudaGetLastError();
}

cudaError_t select_tensor(const DistanceInputs& in, const RoundingShares& shares, float* slab, int rows, int cols,
                          int ld, int col0, std::int64_t first_index, Lists running, Lists scratch, int* kept,
                          ChunkBound chunk, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (in.metric != Metric::euclidean || in.dims < 1 || in.dims > kMaxDims || !tensor_bound_applies(in.dims) ||
      ld < cols || running.k < 1 || (chunk.bound != nullptr && col0 != 0) || shares.query == nullptr ||
      shares.train_max == nullptr)
    return cudaErrorInvalidValue;
  tensor_filter_kernel<<<rows, kThreads, 0, stream>>>(in, shares, slab, cols, ld, col0, running, kept, chunk);
  // The query row beside the stages and the static shared memory passes the default
  // 48 KiB a block.
  const std::size_t query_bytes = static_cast<std::size_t>(in.dims) * sizeof(float);
  const auto launch = [&](auto kernel, std::size_t stage_bytes) {
    const std::size_t bytes = stage_bytes + query_bytes;
    if (const cudaError_t e =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
        e != cudaSuccess)
      return e;
    kernel<<<rows, kThreads, bytes, stream>>>(in, shares, slab, cols, ld, col0, first_index, running, scratch, kept,
                                              chunk);
    return cudaSuccess;
  };
  if (const cudaError_t e = running.k >= kStagedFromK ? launch(tensor_exact_kernel<true>, stage_block_bytes<true>())
                                                      : launch(tensor_exact_kernel<false>, 0);
      e != cudaSuccess)
    return e;
  return cudaGetLastError();
}

}  // namespace hb::kernels::knn
