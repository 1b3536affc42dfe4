// The labelled training rows and their preparation for the search. Features may live
// in memory (drawn from a scene) or stay in an HDF5 file and stream through in chunks;
// labels always stay in memory (2 bytes a row).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/knn/distance.hpp"
#include "src/knn/features.hpp"
#include "src/knn/search.hpp"

namespace hb::knn {

// Class names and colours, indexed by class id (0 = unclassified).
struct ClassTable {
  std::vector<std::string> names;
  std::vector<int> lookup;  // r, g, b per class
};

class TrainingSource {
 public:
  virtual ~TrainingSource() = default;
  virtual const std::string& name() const = 0;  // for messages: file or "scene pixels"
  virtual std::int64_t count() const = 0;
  virtual std::int64_t dims() const = 0;
  // Raw feature rows [first, first + rows) into out ([rows, dims]).
  virtual Status read(std::int64_t first, std::int64_t rows, float* out) const = 0;
};

std::unique_ptr<TrainingSource> memory_training_source(std::vector<float> features, std::int64_t dims,
                                                       std::string name);

struct TrainingSet {
  std::unique_ptr<TrainingSource> features;
  std::vector<std::uint16_t> labels;
  std::vector<std::int64_t> pixels;  // scene pixel index of each row, when drawn from a scene
  std::vector<double> wavelength;    // per feature, empty when unknown
  ClassTable classes;

  std::int64_t count() const { return static_cast<std::int64_t>(labels.size()); }
  int class_count() const;  // max(max label + 1, class names)
};

// Same number of features, and the same wavelengths when both sides record them.
Status check_compatible(const TrainingSet& training, const BandSelection& scene_features, const std::string& scene);

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
// cut into chunks of at most `chunk_rows`; kept in memory when the whole set fits
// `cache_bytes`, otherwise re-read from the source chunk by chunk.
class PreparedTraining {
 public:
  static Result<PreparedTraining> prepare(const TrainingSource& source, Metric metric, std::int64_t chunk_rows,
                                          std::int64_t cache_bytes);

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
  const TrainingSource* source_ = nullptr;
  std::int64_t count_ = 0;
  std::int64_t dims_ = 0;
  std::int64_t chunk_rows_ = 1;
  bool cached_ = false;
  std::vector<double> shift_;
  mutable std::vector<float> rows_;  // everything when cached, else the current chunk
};

}  // namespace hb::knn
