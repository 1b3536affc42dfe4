#include "src/mnf/noise_estimators.hpp"

#include <algorithm>
#include <array>

namespace hb::mnf {
namespace {

constexpr std::array kEstimators{
    NoiseEstimatorInfo{NoiseEstimator::diff, "diff", {0, 1}, 0.5,  // Var(a - b) = 2σ²
                       "x(r,c) - x(r+1,c+1), covariance halved (SPy's noise_from_diffs('lowerright'))"},
    NoiseEstimatorInfo{NoiseEstimator::mean3x3, "mean3x3", {1, 1}, 8.0 / 9.0,  // Var(x - mean of 8) = (1 + 1/8)σ²
                       "x - mean of its 8 neighbours, covariance x 8/9 (white noise then gives the noise covariance)"},
    NoiseEstimatorInfo{NoiseEstimator::median3x3, "median3x3", {1, 1}, 1.0,
                       "x - per-band median of its 3x3 window, covariance unscaled (no closed-form factor; it "
                       "underestimates white noise)"},
};

const NoiseEstimatorInfo& info(NoiseEstimator estimator) {
  const auto found = std::find_if(kEstimators.begin(), kEstimators.end(),
                                  [&](const NoiseEstimatorInfo& e) { return e.estimator == estimator; });
  return found != kEstimators.end() ? *found : kEstimators.front();
}

}  // namespace

std::span<const NoiseEstimatorInfo> noise_estimators() { return kEstimators; }

std::vector<std::string> noise_estimator_names() {
  std::vector<std::string> names;
  for (const auto& e : kEstimators) names.emplace_back(e.name);
  return names;
}

std::optional<NoiseEstimator> noise_estimator_from_name(std::string_view name) {
  for (const auto& e : kEstimators)
    if (e.name == name) return e.estimator;
  return std::nullopt;
}

std::string_view noise_estimator_name(NoiseEstimator estimator) { return info(estimator).name; }
double noise_covariance_scale(NoiseEstimator estimator) { return info(estimator).covariance_scale; }
Halo noise_halo(NoiseEstimator estimator) { return info(estimator).halo; }

}  // namespace hb::mnf
