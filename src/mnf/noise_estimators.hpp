// The noise estimators of MNF as the command line, the job-file parser and the
// statistics file see them: names, halos and covariance scales, read from the one list
// of estimators in kernels/mnf/noise_estimators.hpp (where each is defined once for the
// CPU pass and the GPU kernel). Results do not depend on tile size: a residual belongs
// to the tile owning the row of the pixel it is computed for.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/mnf/noise_estimators.hpp"

namespace hb::mnf {

using kernels::mnf::NoiseEstimator;

// The first registered estimator (diff).
inline constexpr NoiseEstimator kDefaultNoiseEstimator{0};

// Rows a tile must carry around its core for the residuals its core rows own.
struct Halo {
  std::int64_t above = 0;
  std::int64_t below = 0;
};

struct NoiseEstimatorInfo {
  NoiseEstimator estimator;
  std::string_view name;         // on the command line, in job files and statistics files
  Halo halo;
  double covariance_scale;       // turns the residuals' covariance into the noise's
  std::string_view description;  // for help texts
};

// Every estimator, in the order help texts and error messages list them.
std::span<const NoiseEstimatorInfo> noise_estimators();
std::vector<std::string> noise_estimator_names();

std::optional<NoiseEstimator> noise_estimator_from_name(std::string_view name);
std::string_view noise_estimator_name(NoiseEstimator estimator);
double noise_covariance_scale(NoiseEstimator estimator);
Halo noise_halo(NoiseEstimator estimator);

}  // namespace hb::mnf
