// Noise residuals on the host: differences to a neighbour or to a 3x3 filter.
#include <algorithm>
#include <array>
#include <string>

#include "src/mnf/cpu_tile_ops.hpp"

namespace hb::mnf::cpu {
namespace {

using detail::WideRows;

// Every pixel a residual reads must be valid and inside the noise window.
bool usable(const WideRows& rows, const mnf::Window& window, std::int64_t row, std::int64_t col) {
  return window.contains(row, col) && rows.is_valid(row, col);
}

void diff_residuals(const WideRows& rows, const mnf::Window& window, std::int64_t row,
                    detail::MomentAccumulator& acc) {
  for (std::int64_t col = 0; col + 1 < rows.samples; ++col) {
    if (!usable(rows, window, row, col) || !usable(rows, window, row + 1, col + 1)) continue;
    const double* a = rows.pixel(row, col);
    const double* b = rows.pixel(row + 1, col + 1);
    double* slot = acc.next();
    for (std::int64_t k = 0; k < rows.bands; ++k) slot[k] = a[k] - b[k];
  }
}

bool window_usable(const WideRows& rows, const mnf::Window& window, std::int64_t row, std::int64_t col) {
  for (std::int64_t dr = -1; dr <= 1; ++dr)
    for (std::int64_t dc = -1; dc <= 1; ++dc)
      if (!usable(rows, window, row + dr, col + dc)) return false;
  return true;
}

void filter_residuals(const WideRows& rows, const mnf::Window& window, std::int64_t row, bool median,
                      detail::MomentAccumulator& acc) {
  std::array<double, 9> values{};
  for (std::int64_t col = 1; col + 1 < rows.samples; ++col) {
    if (!window_usable(rows, window, row, col)) continue;
    double* slot = acc.next();
    for (std::int64_t k = 0; k < rows.bands; ++k) {
      std::size_t n = 0;
      for (std::int64_t dr = -1; dr <= 1; ++dr)
        for (std::int64_t dc = -1; dc <= 1; ++dc) values[n++] = rows.pixel(row + dr, col + dc)[k];
      const double centre = values[4];
      double reference = 0.0;
      if (median) {
        std::nth_element(values.begin(), values.begin() + 4, values.end());
        reference = values[4];
      } else {
        for (std::size_t i = 0; i < 9; ++i) reference += i == 4 ? 0.0 : values[i];
        reference /= 8.0;
      }
      slot[k] = centre - reference;
    }
  }
}

}  // namespace

Status accumulate_noise_moments(const io::Tile& tile, const mnf::PixelRules& rules, const mnf::NoiseConfig& config,
                                mnf::Moments& noise) {
  if (noise.bands() != rules.used_bands())
    return Error{ErrorKind::internal, {}, {}, "noise moments and pixel rules disagree on the band count"};
  for (double s : noise.shift)
    if (s != 0.0) return Error{ErrorKind::internal, {}, {}, "noise moments are accumulated about zero"};
  const auto halo = mnf::noise_halo(config.estimator);
  const RowRange core = tile.core();
  const RowRange held = tile.held();
  if (held.end < std::min(config.lines, core.end + halo.below) || held.begin > std::max<std::int64_t>(0, core.begin - halo.above))
    return Error{ErrorKind::internal, {}, {},
                 "noise estimator " + std::string(mnf::noise_estimator_name(config.estimator)) +
                     " needs halo rows the tile does not carry"};
  auto wide = detail::widen(tile, rules, held);
  if (!wide) return wide.error();
  detail::MomentAccumulator acc(noise);
  // A residual belongs to the row of its top-left (diff) or centre (3x3) pixel.
  const std::int64_t first = std::max(core.begin, held.begin + halo.above);
  const std::int64_t last = std::min(core.end, held.end - halo.below);
  for (std::int64_t row = first; row < last; ++row) {
    if (config.estimator == mnf::NoiseEstimator::diff)
      diff_residuals(*wide, config.window, row, acc);
    else
      filter_residuals(*wide, config.window, row, config.estimator == mnf::NoiseEstimator::median3x3, acc);
  }
  return {};
}

}  // namespace hb::mnf::cpu
