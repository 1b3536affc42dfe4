// k-selection over one query's distance row for one training chunk: the three CPU
// methods mirror what the CUDA backend does (GS_KNN: k rounds of a min-reduction
// network for small k, a bitonic sort for larger k), plus a bounded heap. All of them
// order candidates by (distance, index) so they return identical neighbours.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "src/knn/distance.hpp"
#include "src/knn/topk.hpp"

namespace hb::knn {

// tensor: the GPU's exact method through TF32 tensor cores (kernels/knn/tensor.cu); on
// the CPU it is fast (the same lists).
enum class SelectMethod { automatic, kmin, bitonic, fast, tensor };

std::optional<SelectMethod> select_method_from_name(std::string_view name);  // auto|kmin|bitonic|fast|tensor
std::string_view select_method_name(SelectMethod method);

// What --select auto runs on the GPU: tensor for euclidean distances over at least
// kTensorAutoFromDims features up to k = kTensorAutoMaxK, where it ran ahead of fast on
// uniform, clustered and spectral data, and where tensor scans the chunk without a slab
// (kernels/knn/tensor_scan_limits.hpp: at most 16 features, k <= 8;
// kernels/knn/README.md); fast elsewhere. A function of the search's shape alone, so
// the same for every rank count and tile size.
inline constexpr std::int64_t kTensorAutoFromDims = 128;
inline constexpr int kTensorAutoMaxK = 1024;
SelectMethod gpu_automatic_method(Metric metric, std::int64_t dims, int k);

// Reusable buffers so that selection allocates once per search, not per row.
struct SelectScratch {
  std::vector<Neighbor> pairs;
};

// A row: distances of one query to training rows first_index .. first_index + n - 1.
struct DistanceRow {
  const float* distance = nullptr;
  std::int64_t n = 0;
  std::int64_t first_index = 0;
};

// kmin: k rounds; each round is a pairwise min-reduction (a comparator network of
// depth ceil(log2 n)) whose winner is swapped to the end of the live range and
// excluded from later rounds. O(k n) work: the small-k method.
// Writes the min(k, n) closest pairs of the row, ascending, to `out`.
void select_kmin(const DistanceRow& row, int k, SelectScratch& scratch, std::vector<Neighbor>& out);

// bitonic: the row padded to a power of two with (kNoDistance, kNoIndex) and sorted
// by a bitonic network; the first min(k, n) pairs are taken. O(n log^2 n), independent of k.
void select_bitonic(const DistanceRow& row, int k, SelectScratch& scratch, std::vector<Neighbor>& out);

// fast: a bounded max-heap of at most k pairs, seeded with nothing and filtered by
// `bound` (the running k-th neighbour: a pair must be closer than it to matter).
// O(n + m log k) for m pairs that pass the bound. Memory: k pairs beyond the row.
void select_fast(const DistanceRow& row, int k, Neighbor bound, SelectScratch& scratch, std::vector<Neighbor>& out);

}  // namespace hb::knn
