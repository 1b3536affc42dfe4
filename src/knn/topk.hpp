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
#include <utility>
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

  float* distances(std::int64_t q) { return empty_if_unwritten(), distances_.data() + q * k_; }
  std::int64_t* indices(std::int64_t q) { return empty_if_unwritten(), indices_.data() + q * k_; }
  const float* distances(std::int64_t q) const { return empty_if_unwritten(), distances_.data() + q * k_; }
  const std::int64_t* indices(std::int64_t q) const { return empty_if_unwritten(), indices_.data() + q * k_; }

  // The current k-th pair of query q: a candidate must be closer than it to enter.
  Neighbor worst(std::int64_t q) const { return {distances(q)[k_ - 1], indices(q)[k_ - 1]}; }

  // Empties every list (keeps the allocation).
  void reset();
  // Resizes to `queries` empty lists of the same k. With `unwritten`, for a search that
  // makes empty lists itself (KnnSearch::makes_empty_lists), their memory is neither
  // grown nor written: that search sees unwritten() and writes every pair through
  // rows_to_write(); any other access grows and empties them first. Emptying a 40 GB
  // scene's lists tile by tile touched 4.8 GB of host memory (every cache line, even for
  // the heads alone): about 1 s of the 6 s on one GPU, before the GPU made the same
  // empty lists again. Lists voted on the device (KnnSearch::search_sequence_and_vote)
  // are never touched, so they never take host memory at all (growing a pinned vector
  // writes every new element: 12 GB at k = 1024 for 10^6 queries).
  void resize(std::int64_t queries, bool unwritten = false);
  bool unwritten() const { return unwritten_; }
  // Where a search writes rows from q on, every pair of each (the lists then count as
  // written), and the lists' memory, for asking where it lives.
  std::pair<float*, std::int64_t*> rows_to_write(std::int64_t q) {
    allocate();
    unwritten_ = false;
    return {distances_.data() + q * k_, indices_.data() + q * k_};
  }
  std::pair<const void*, const void*> memory() const {
    allocate();
    return {distances_.data(), indices_.data()};
  }
  // Pairs of host memory the lists hold now (unwritten lists may hold fewer than
  // queries() * k() until first touched).
  std::int64_t allocated_pairs() const { return static_cast<std::int64_t>(distances_.size()); }

  // Folds an ascending candidate list of length n into query q's list.
  void merge(std::int64_t q, const float* distance, const std::int64_t* index, std::int64_t n);
  void merge(std::int64_t q, std::span<const Neighbor> sorted_candidates);

 private:
  void empty_if_unwritten() const {
    if (unwritten_) {
      unwritten_ = false;
      allocate();
      reset_memory();
    }
  }
  void allocate() const;  // grows the memory to queries() * k() pairs (never shrinks it)
  void reset_memory() const;

  std::int64_t queries_ = 0;
  int k_ = 0;
  mutable bool unwritten_ = false;
  // Mutable: reading lists left unwritten empties them first.
  mutable std::pmr::vector<float> distances_;
  mutable std::pmr::vector<std::int64_t> indices_;
  std::vector<float> scratch_distance_;
  std::vector<std::int64_t> scratch_index_;
};

}  // namespace hb::knn
