// First and second moments of pixel spectra and of noise residuals, accumulated per tile
// in FP64 and summable across tiles and ranks: the statistics pass of MNF and PCA.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/error.hpp"
#include "io/metadata.hpp"
#include "src/linalg/matrix.hpp"
#include "src/mnf/noise_estimators.hpp"

namespace hb::mnf {

// Which pixels and bands the statistics see.
//  - bands: the scene bands used, ascending. Bands marked bad in the bad band list are
//    left out; every statistic, transform and output row of the basis is over these.
//  - a pixel is excluded when any used band is non-finite, or equals the data ignore
//    value (any band, not all: a statistic must never see a fill value, and fill
//    borders fill every band anyway). Bad bands are not inspected.
struct PixelRules {
  std::vector<std::int64_t> bands;
  std::optional<double> ignore_value;

  std::int64_t used_bands() const { return static_cast<std::int64_t>(bands.size()); }
};
PixelRules pixel_rules(const io::CubeInfo& info);
std::vector<std::int64_t> excluded_bands(const io::CubeInfo& info);

// Optional bounds (rows [row_begin, row_end), columns [col_begin, col_end)) that
// restrict the noise statistics to a part of the scene (--subset r0:r1,c0:c1).
struct Window {
  std::optional<std::int64_t> row_begin, row_end, col_begin, col_end;

  bool contains(std::int64_t row, std::int64_t col) const {
    return (!row_begin || row >= *row_begin) && (!row_end || row < *row_end) &&
           (!col_begin || col >= *col_begin) && (!col_end || col < *col_end);
  }
  bool empty() const { return !row_begin && !row_end && !col_begin && !col_end; }
};
// "r0:r1,c0:c1"; either bound of either range may be empty ("100:,:50").
Result<Window> parse_window(std::string_view text);

struct NoiseConfig {
  NoiseEstimator estimator = kDefaultNoiseEstimator;
  Window window;
  std::int64_t lines = 0;  // scene lines: lets a tile check that it carries the halo it needs
};

// Sums of vectors centred on a fixed provisional mean `shift`. Centring avoids the
// cancellation of sum(x²) - n·mean² when values are large (1e4) and variances small.
// Partial Moments with the same shift add element-wise (merge, or an allreduce of
// count, sum and cross): the shift must be chosen before accumulation, identically on
// every rank.
struct Moments {
  std::int64_t count = 0;
  std::vector<double> shift;  // [bands]
  std::vector<double> sum;    // [bands]: Σ (x - shift)
  std::vector<double> cross;  // [bands x bands] row-major; upper triangle (j >= i) holds
                              // Σ (x - shift)(x - shift)ᵀ, the lower one stays zero

  static Moments zero(std::vector<double> shift);
  std::int64_t bands() const { return static_cast<std::int64_t>(shift.size()); }
};

Status merge(Moments& into, const Moments& part);

// Count, sum and cross as doubles for a message between ranks (the shift is agreed
// beforehand): 1 + bands + bands^2 values; the count is exact below 2^53 pixels.
std::vector<double> pack(const Moments& m);
// Into `m`, whose shift (and so its size) is already set.
void unpack(std::span<const double> buffer, Moments& m);

struct MeanCovariance {
  std::int64_t count = 0;
  std::vector<double> mean;
  linalg::Matrix covariance;  // normalised by count - 1, as SPy's calc_stats (numpy.cov)
};
// Mean and unbiased covariance; scaled by `covariance_scale` (noise estimators).
Result<MeanCovariance> covariance(const Moments& moments, double covariance_scale = 1.0);

}  // namespace hb::mnf
