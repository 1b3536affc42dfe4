#include "src/classify/training.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <fmt/core.h>

namespace hb::classify {
namespace {

class MemoryTrainingSource final : public TrainingSource {
 public:
  MemoryTrainingSource(std::vector<float> features, std::int64_t dims, std::string name)
      : features_(std::move(features)), dims_(dims), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  std::int64_t count() const override { return dims_ > 0 ? static_cast<std::int64_t>(features_.size()) / dims_ : 0; }
  std::int64_t dims() const override { return dims_; }
  Status read(std::int64_t first, std::int64_t rows, float* out) const override {
    std::copy_n(features_.begin() + first * dims_, rows * dims_, out);
    return {};
  }

 private:
  std::vector<float> features_;
  std::int64_t dims_;
  std::string name_;
};

}  // namespace

std::unique_ptr<TrainingSource> memory_training_source(std::vector<float> features, std::int64_t dims,
                                                       std::string name) {
  return std::make_unique<MemoryTrainingSource>(std::move(features), dims, std::move(name));
}

int TrainingSet::class_count() const {
  int count = static_cast<int>(classes.names.size());
  for (const auto label : labels) count = std::max(count, static_cast<int>(label) + 1);
  return count;
}

Status check_compatible(const TrainingSet& training, const BandSelection& scene_features, const std::string& scene) {
  const auto& name = training.features->name();
  if (training.features->dims() != scene_features.dims())
    return bad_input(name, "features",
                     fmt::format("{} features per training row, but the scene {} has {} usable bands",
                                 training.features->dims(), scene, scene_features.dims()));
  if (training.wavelength.empty() || scene_features.wavelength.empty()) return {};
  for (std::size_t b = 0; b < training.wavelength.size(); ++b) {
    const double a = training.wavelength[b];
    const double s = scene_features.wavelength[b];
    if (std::abs(a - s) > 1e-6 * std::max({1.0, std::abs(a), std::abs(s)}))
      return bad_input(name, "wavelength",
                       fmt::format("feature {} is at {} but the scene {} has {} there", b, a, scene, s));
  }
  return {};
}

}  // namespace hb::classify
