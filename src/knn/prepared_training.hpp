// KNN's training rows ready for the search: the training mean summed exactly (the
// Euclidean shift, the same bits on any number of ranks), the rows shifted by it and cut
// into chunks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "src/base/error.hpp"
#include "src/classify/training.hpp"
#include "src/knn/distance.hpp"
#include "src/knn/search.hpp"

namespace hb::knn {

// Per-feature sums of float rows in 96-bit fixed point (2^-32 resolution): integer
// addition, so any split of the rows over ranks, summed in any order, gives the same
// bits — the training mean (the Euclidean shift) is then the same for any rank count.
class FixedSum {
 public:
  explicit FixedSum(std::int64_t dims)
      : hi_(static_cast<std::size_t>(dims), 0), lo_(static_cast<std::size_t>(dims), 0) {}
  // Fails on a non-finite feature or one beyond +-2^31 (named by `source`, `first_row`).
  Status add(const float* rows, std::int64_t count, const std::string& source, std::int64_t first_row);
  void add(const FixedSum& other);
  std::vector<double> mean(std::int64_t count) const;
  std::vector<std::int64_t>& high() { return hi_; }
  std::vector<std::uint64_t>& low() { return lo_; }

 private:
  void add_fixed(std::size_t b, std::int64_t v);
  std::vector<std::int64_t> hi_;
  std::vector<std::uint64_t> lo_;
};

// Training rows ready for KnnSearch: shifted by the training mean (Euclidean only),
// cut into chunks of at most `chunk_rows` (set_chunk_rows; one chunk until then); kept
// in memory when the whole set fits `cache_bytes`, otherwise re-read from the source
// chunk by chunk.
class PreparedTraining {
 public:
  static Result<PreparedTraining> prepare(const classify::TrainingSource& source, Metric metric,
                                          std::int64_t cache_bytes);
  void set_chunk_rows(std::int64_t rows) {
    chunk_rows_ = std::max<std::int64_t>(1, std::min(rows, std::max<std::int64_t>(count_, 1)));
  }

  std::int64_t count() const { return count_; }
  std::int64_t dims() const { return dims_; }
  std::int64_t chunk_count() const { return (count_ + chunk_rows_ - 1) / chunk_rows_; }
  bool cached() const { return cached_; }
  const std::vector<double>& shift() const { return shift_; }  // zeros when the metric is not shift-invariant

  // Applies the training shift to query features in place.
  void prepare_queries(float* features, std::int64_t rows) const;

  // Chunk i; the view stays valid until the next call.
  Result<TrainingChunk> chunk(std::int64_t i) const;

 private:
  const classify::TrainingSource* source_ = nullptr;
  std::int64_t count_ = 0;
  std::int64_t dims_ = 0;
  std::int64_t chunk_rows_ = 1;
  bool cached_ = false;
  std::vector<double> shift_;
  mutable std::vector<float> rows_;  // everything when cached, else the current chunk
};

}  // namespace hb::knn
