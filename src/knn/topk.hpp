// Running k-nearest lists and the merge that combines them. A list is k (distance,
// index) pairs in ascending lexicographic order: a smaller distance wins, and equal
// distances go to the lower training index, so every method, chunking and rank count
// yields the same neighbours. Unfilled slots hold (kNoDistance, kNoIndex) and sort last.
// The merge is the one reduction used everywhere: across training chunks on one device
// and across ranks in the distributed search.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <memory_resource>
#include <vector>

namespace hb::knn {

inline constexpr float kNoDistance = std::numeric_limits<float>::infinity();
inline constexpr std::int64_t kNoIndex = std::numeric_limits<std::int64_t>::max();

// The one ordering of candidates: (distance, index) lexicographically.
inline bool closer(float da, std::int64_t ia, float db, std::int64_t ib) {
  return da < db || (da == db && ia < ib);
}

struct Neighbor {
  float distance = kNoDistance;
  std::int64_t index = kNoIndex;
};

inline bool operator<(const Neighbor& a, const Neighbor& b) {
  return closer(a.distance, a.index, b.distance, b.index);
}

// Merges two ascending lists into `out` (which must not alias them), keeping the first
// `k` of their union. Returns how many pairs were written: min(k, an + bn).
std::int64_t merge_sorted(const float* a_distance, const std::int64_t* a_index, std::int64_t an,
                          const float* b_distance, const std::int64_t* b_index, std::int64_t bn,
                          std::int64_t k, float* out_distance, std::int64_t* out_index);

// nq lists of k pairs, stored as two flat row-major arrays [nq, k] so that a device
// backend can copy them in one transfer each.
class TopK {
 public:
  TopK() = default;
  // `memory` holds the lists: KnnSearch::list_memory(), pinned for a GPU search.
  TopK(std::int64_t queries, int k, std::pmr::memory_resource* memory = std::pmr::get_default_resource());

  std::int64_t queries() const { return queries_; }
  int k() const { return k_; }

  float* distances(std::int64_t q) { return distances_.data() + q * k_; }
  std::int64_t* indices(std::int64_t q) { return indices_.data() + q * k_; }
  const float* distances(std::int64_t q) const { return distances_.data() + q * k_; }
  const std::int64_t* indices(std::int64_t q) const { return indices_.data() + q * k_; }

  // The current k-th pair of query q: a candidate must be closer than it to enter.
  Neighbor worst(std::int64_t q) const {
    return {distances_[static_cast<std::size_t>(q * k_ + k_ - 1)], indices_[static_cast<std::size_t>(q * k_ + k_ - 1)]};
  }

  // Empties every list (keeps the allocation).
  void reset();
  // Resizes to `queries` empty lists of the same k. With `heads_only`, for a search that
  // makes empty lists itself (KnnSearch::makes_empty_lists): only each list's first pair
  // is emptied, the others are stale until that search writes every pair. Emptying all
  // of a 40 GB scene's lists, tile by tile, stored 4.8 GB: 0.7 s of its 5.5 s on one GPU.
  void resize(std::int64_t queries, bool heads_only = false);

  // Folds an ascending candidate list of length n into query q's list.
  void merge(std::int64_t q, const float* distance, const std::int64_t* index, std::int64_t n);
  void merge(std::int64_t q, std::span<const Neighbor> sorted_candidates);

 private:
  std::int64_t queries_ = 0;
  int k_ = 0;
  std::pmr::vector<float> distances_;
  std::pmr::vector<std::int64_t> indices_;
  std::vector<float> scratch_distance_;
  std::vector<std::int64_t> scratch_index_;
};

}  // namespace hb::knn
