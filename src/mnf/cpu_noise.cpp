// Noise residuals on the host, for every estimator of kernels/mnf/noise_estimators.hpp.
#include <algorithm>
#include <string>

#include "src/mnf/cpu_tile_ops.hpp"

namespace hb::mnf::cpu {
namespace {

using detail::WideRows;

// Every pixel a residual reads must be valid and inside the noise window.
bool usable(const WideRows& rows, const mnf::Window& window, std::int64_t row, std::int64_t col) {
  return window.contains(row, col) && rows.is_valid(row, col);
}

// The residuals of the pixels of `row` that own one under estimator E.
template <class E>
void residuals(const WideRows& rows, const mnf::Window& window, std::int64_t row, detail::MomentAccumulator& acc) {
  constexpr auto reach = kernels::mnf::reach_of<E>();
  for (std::int64_t col = reach.left; col + reach.right < rows.samples; ++col) {
    bool all_usable = true;
    for (int i = 0; i < E::kTaps; ++i) all_usable = all_usable && usable(rows, window, row + E::tap(i).row, col + E::tap(i).col);
    if (!all_usable) continue;
    const double* tapped[E::kTaps];
    for (int i = 0; i < E::kTaps; ++i) tapped[i] = rows.pixel(row + E::tap(i).row, col + E::tap(i).col);
    double* slot = acc.next();
    for (std::int64_t k = 0; k < rows.bands; ++k) slot[k] = E::residual([&](int i) { return tapped[i][k]; });
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
  // A residual belongs to the row of the pixel it is computed for (its tap (0, 0)).
  const std::int64_t first = std::max(core.begin, held.begin + halo.above);
  const std::int64_t last = std::min(core.end, held.end - halo.below);
  kernels::mnf::visit_estimator(config.estimator, [&]<class E>(E) {
    for (std::int64_t row = first; row < last; ++row) residuals<E>(*wide, config.window, row, acc);
  });
  return {};
}

}  // namespace hb::mnf::cpu
