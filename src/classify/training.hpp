// The labelled training rows every classifier starts from. Features may live in memory
// (drawn from a scene) or stay in an HDF5 file and stream through in chunks; labels
// always stay in memory (2 bytes a row).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/classify/class_table.hpp"
#include "src/classify/features.hpp"

namespace hb::classify {

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

}  // namespace hb::classify
