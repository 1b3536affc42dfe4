// The noise estimators of MNF, in one table (noise_estimators.cpp) that the command
// line, the job-file parser and the statistics file read. A residual counts when every
// pixel it reads is valid and inside the noise window, and belongs to the tile owning
// the row of its top-left (diff) or centre (3x3) pixel, so results do not depend on
// tile size. Each estimator's residuals are computed by the CPU half
// (src/mnf/cpu_noise.cpp) and the CUDA kernels (kernels/mnf/moments.cu).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hb::mnf {

enum class NoiseEstimator { diff, mean3x3, median3x3 };

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
