// KNN device kernels: distance finishing, the three k-selection methods, the merge of
// chunk results into running top-k lists, and the vote. Host-only declarations (plain
// C++ can include this header); each launcher enqueues on `stream` and returns the
// launch's cudaGetLastError(). Conventions shared by every kernel (kernels/knn/README.md):
//  * a candidate is (distance, index); smaller distance first, equal distances to the
//    lower index; every kernel orders by exactly that, so all methods agree bit for bit;
//  * lists are row-major [rows, k] pairs, ascending; unfilled slots hold
//    (+inf, INT64_MAX), the host's (kNoDistance, kNoIndex);
//  * indices inside a chunk are int32 ("local"), lists hold global int64 indices
//    (chunk first_index + local).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/knn/tensor_scan_limits.hpp"

namespace hb::kernels::knn {

enum class Metric : int { euclidean = 0, cosine = 1 };
enum class Weights : int { uniform = 0, distance = 1 };

// What finishing a distance needs. queries/query_norms are indexed by the row of the
// tile (query block), train/train_norms by the chunk-local training index.
struct DistanceInputs {
  Metric metric = Metric::euclidean;
  const float* queries = nullptr;      // [rows, dims]
  const float* query_norms = nullptr;  // [rows]: |q|^2 (euclidean) or |q| (cosine)
  const float* train = nullptr;        // [chunk rows, dims]
  const float* train_norms = nullptr;  // [chunk rows]
  int dims = 0;
  // [1]: the largest of train_norms (largest_norm), or null. The fast path's scans then
  // test each pair first with one FMA against a bound that covers this norm's rounding.
  const float* train_norm_max = nullptr;
};

struct Lists {
  float* distance = nullptr;      // [rows, k]
  std::int64_t* index = nullptr;  // [rows, k]
  int k = 0;
};

// norms[r] = sum(x^2) (euclidean) or sqrt(sum(x^2)) (cosine), summed in FP64 in band
// order and rounded once: the CPU's row_norms bit for bit.
cudaError_t row_norms(Metric metric, const float* rows, int count, int dims, float* norms, cudaStream_t stream);

// *largest = the largest of norms[0 .. count) (NaN if one is NaN; 0 if count is 0).
cudaError_t largest_norm(const float* norms, int count, float* largest, cudaStream_t stream);

// In place on an inner-product tile: tile[r * ld + c] = q_r . t_(col0 + c) becomes the
// ranking distance (src/knn/distance.hpp: expansion, FP64 recompute near zero, cosine
// clamp), for r < rows, c < cols.
cudaError_t finish_distances(const DistanceInputs& in, float* tile, int rows, int cols, int ld, int col0,
                             cudaStream_t stream);

// Every slot of `rows` lists set to (+inf, INT64_MAX).
cudaError_t fill_empty(Lists lists, int rows, cudaStream_t stream);

// Chunk-level selection on finished distances [rows, cols] (leading dimension ld): the
// min(k, cols) closest of each row, ascending, global indices first_index + column;
// slots beyond cols are empty. kmin: k rounds of a block-wide min reduction (GS_KNN).
cudaError_t select_kmin(const float* distances, int rows, int cols, std::int64_t ld, std::int64_t first_index,
                        Lists out, cudaStream_t stream);
// bitonic: the row streams through a shared-memory buffer that is bitonic-sorted, the
// best pow2(k) kept between refills. k up to bitonic_max_k().
cudaError_t select_bitonic(const float* distances, int rows, int cols, std::int64_t ld, std::int64_t first_index,
                           Lists out, cudaStream_t stream);
int bitonic_max_k();

// running[r] := the k smallest of running[r] and the first `count` pairs of
// candidates[r] (ascending, all real). scratch: like running, overwritten.
cudaError_t merge_lists(Lists running, Lists candidates, int count, int rows, Lists scratch, cudaStream_t stream);

// fast: distances finished on the fly from an inner-product slab [rows, cols] (ld) for
// training columns col0 .. col0 + cols - 1 of the chunk, filtered against each list's
// current k-th pair. The finished distances are never written. Any k. Up to
// fused_warp_max_k() a warp per row inserts survivors into a sorted list in its
// registers; above, a block per row buffers them in shared memory and, when full,
// sorts and merges them into `running`.
// A chunk's slabs of the same rows run in column order, `place` saying which one this
// is. For k in [fused_pool_min_k(), fused_pool_max_k()] a flush is a radix-select
// compaction instead of a sort and merge: the running list is an unsorted pool of the k
// closest pairs between the first and the last slab, sorted once at the end of the last
// (or only) one, so `running` is a sorted list again only after the chunk's last slab.
enum class SlabPlace : int { only = 0, first = 1, middle = 2, last = 3 };
cudaError_t select_fused(const DistanceInputs& in, const float* slab, int rows, int cols, int ld, int col0,
                         std::int64_t first_index, Lists running, Lists scratch, SlabPlace place,
                         cudaStream_t stream);
int fused_warp_max_k();
int fused_pool_min_k();
int fused_pool_max_k();
// Rows (blocks) of select_fused's block path (k > fused_warp_max_k()) resident at once
// on the current GPU: one wave.
int fused_rows_per_wave();

// tensor: what a whole-chunk bound (tensor_chunk_bound) hands the selection of a slab,
// a row each; all null where there is none.
struct ChunkBound {
  float* bound = nullptr;  // near the row's k-th smallest upper end
  int* count = nullptr;    // the chunk's pairs whose upper end is within it: proven where >= k
  // [rows, 2 * tensor_pair_capacity()] ints: the (column, D~ bits) pairs the bound's
  // count pass kept, where kept[2r + 1] says so; or null (the filter keeps them)
  int* pairs = nullptr;
};

// tensor: the rows' shares of the bound's scale, from their own rounding to TF32
// (tensor_round_rows; tensor_bound.hpp): each query row's, from the slab's first row,
// and the largest of the chunk's training rows' (a pair's scale takes both).
struct RoundingShares {
  const float* query = nullptr;      // [rows]
  const float* train_max = nullptr;  // [1]
};

// tensor (euclidean): `slab` holds approximate inner products [rows, cols] (ld) from
// TF32 tensor cores of the rows rounded by tensor_round_rows, whose shares `shares`
// holds, for training columns col0 .. col0 + cols - 1. Every pair that the
// proven bound (tensor_bound.hpp) cannot rule out of the running top k is finished
// exactly (FP32 FMA chain in band order, then the exact methods' rule) and merged into
// `running`, which is sorted after every call: the lists equal fast's bit for bit
// wherever its SGEMM rounds like that chain. The slab is overwritten (kept columns);
// `kept` is device scratch of 2 * rows ints. dims up to tensor_max_dims(). With a
// whole-chunk bound (`chunk` over the whole chunk, col0 = 0), rows whose count is at
// least k take its bound as proven, and rows whose pairs it kept are not filtered again.
cudaError_t select_tensor(const DistanceInputs& in, const RoundingShares& shares, float* slab, int rows, int cols,
                          int ld, int col0, std::int64_t first_index, Lists running, Lists scratch, int* kept,
                          ChunkBound chunk, cudaStream_t stream);
// tensor, a whole-chunk bound a row: `products` holds TF32 inner products [rows, cols]
// (ld) of the rows with every training row of a chunk of `cols`. Sampled from `samples`
// columns (a multiple of tensor_sample_run(), up to tensor_bound_samples()) in runs of
// tensor_sample_run() adjacent columns `stride` apart (stride >= tensor_sample_run()),
// then refined by a count over the chunk: bound[r] := a value near the row's k-th
// smallest upper end (the sample's, above its expected count of k, where the count
// cannot refine it; +inf where the sample cannot say), count[r] := the chunk's pairs
// whose upper end is at most bound[r]: a row with at least k holds a proven bound on
// its k-th pair. With `pairs`, the count pass also keeps the pairs the filter would
// keep under the sampled bound (lower end within it and within running's k-th): where
// the bound is proven and they fit tensor_pair_capacity(), kept[2r] := their count and
// kept[2r + 1] := 2 (select_tensor then finishes them from `pairs`); else
// kept[2r + 1] := 0.
cudaError_t tensor_chunk_bound(const DistanceInputs& in, const RoundingShares& shares, const float* products,
                               int rows, int cols, int ld, int samples, int stride, Lists running, int* kept,
                               ChunkBound chunk, cudaStream_t stream);
// tensor: out := in rounded to TF32 by nearest ([rows, dims]), the GEMM's inputs, so
// that the bound need not assume the GEMM's own conversion rounds them, and share[r] :=
// row r's share of the bound's scale (tensor_rounding_share, rounded up).
cudaError_t tensor_round_rows(const float* in, float* out, std::int64_t rows, int dims, float* share,
                              cudaStream_t stream);
int tensor_bound_samples();
int tensor_sample_run();
int tensor_pair_capacity();
int tensor_max_dims();

// tensor's scan path (tensor_scan.cu), for euclidean distances over at most
// kTensorScanMaxDims bands and k <= kTensorScanMaxK: the `rows` query rows of
// `in` against the chunk's `cols` rows, merged into `running` in place. The lists are
// select_tensor's for the same chunk: the k smallest pairs of its exact distance.
cudaError_t tensor_scan(const DistanceInputs& in, int rows, int cols, std::int64_t first_index, Lists running,
                        cudaStream_t stream);

// Votes (src/knn/vote.hpp rules): label[r], confidence[r] from list r. labels: class id
// of every training row (global index). classes <= vote_max_classes().
struct VoteInputs {
  const float* distance = nullptr;      // [rows, k] ranking distances
  const std::int64_t* index = nullptr;  // [rows, k]
  int k = 0;
  const std::uint16_t* labels = nullptr;
  std::int64_t label_count = 0;
  int classes = 0;
  Metric metric = Metric::euclidean;
  Weights weights = Weights::uniform;
};
cudaError_t vote(const VoteInputs& in, int rows, std::uint16_t* label, float* confidence, cudaStream_t stream);
int vote_max_classes();

}  // namespace hb::kernels::knn
