#include "io/resample.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace hb::io {
namespace {

constexpr double kMatchNm = 0.01;
constexpr double kFwhmToSigma = 2.3548200450309493;  // 2 sqrt(2 ln 2)

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Channel {
  double nm = 0;
  std::int64_t index = 0;  // source band
  bool gap = false;
};

// The source bands by wavelength (AVIRIS spectrometers overlap, so centres step back);
// the usable ones (no gap) with their trapezoid widths.
struct Axis {
  std::vector<Channel> all;
  std::vector<Channel> usable;
  std::vector<double> width_nm;
};

Axis make_axis(const std::vector<double>& nm, const std::vector<std::uint8_t>& gap) {
  Axis axis;
  for (std::size_t c = 0; c < nm.size(); ++c)
    axis.all.push_back({nm[c], static_cast<std::int64_t>(c), c < gap.size() && gap[c] != 0});
  std::stable_sort(axis.all.begin(), axis.all.end(), [](const Channel& a, const Channel& b) { return a.nm < b.nm; });
  for (const auto& ch : axis.all)
    if (!ch.gap) axis.usable.push_back(ch);
  const std::size_t n = axis.usable.size();
  for (std::size_t j = 0; j < n; ++j) {
    const double lo = axis.usable[j > 0 ? j - 1 : j].nm;
    const double hi = axis.usable[j + 1 < n ? j + 1 : j].nm;
    const double span = (j > 0 && j + 1 < n) ? 2.0 : 1.0;
    axis.width_nm.push_back(n == 1 ? 1.0 : (hi - lo) / span);
  }
  return axis;
}

std::optional<BandWeights> linear_weights(const Axis& axis, double centre) {
  const auto& all = axis.all;
  const auto above = std::upper_bound(all.begin(), all.end(), centre, [](double c, const Channel& ch) { return c < ch.nm; });
  if (above == all.begin()) return std::nullopt;
  const Channel& left = *(above - 1);
  if (left.nm == centre) return left.gap ? std::nullopt : std::optional<BandWeights>(BandWeights{{left.index, 1.0}});
  if (above == all.end() || left.gap || above->gap) return std::nullopt;
  const double t = (centre - left.nm) / (above->nm - left.nm);
  return BandWeights{{left.index, 1.0 - t}, {above->index, t}};
}

std::optional<BandWeights> gaussian_weights(const Axis& axis, double centre, double fwhm) {
  if (axis.usable.empty() || centre < axis.all.front().nm || centre > axis.all.back().nm) return std::nullopt;
  for (const auto& ch : axis.all)
    if (ch.gap && std::abs(ch.nm - centre) <= fwhm) return std::nullopt;
  const double sigma = fwhm / kFwhmToSigma;
  BandWeights w;
  double total = 0;
  for (std::size_t j = 0; j < axis.usable.size(); ++j) {
    const double z = (axis.usable[j].nm - centre) / sigma;
    if (std::abs(z) > 3.0) continue;
    const double weight = std::exp(-0.5 * z * z) * axis.width_nm[j];
    w.emplace_back(axis.usable[j].index, weight);
    total += weight;
  }
  if (w.empty() || total <= 0) return std::nullopt;
  for (auto& [index, weight] : w) weight /= total;
  return w;
}

std::optional<BandWeights> matched_weights(const Axis& axis, double centre) {
  for (const auto& ch : axis.all)
    if (std::abs(ch.nm - centre) < kMatchNm)
      return ch.gap ? std::nullopt : std::optional<BandWeights>(BandWeights{{ch.index, 1.0}});
  return std::nullopt;
}

bool all_matched(const Axis& axis, const std::vector<double>& centres) {
  return std::all_of(centres.begin(), centres.end(), [&](double c) {
    return std::any_of(axis.all.begin(), axis.all.end(), [&](const Channel& ch) { return std::abs(ch.nm - c) < kMatchNm; });
  });
}

}  // namespace

std::vector<double> to_nanometres(const std::vector<double>& wavelength, const std::string& units) {
  const std::string u = lower(units);
  double scale = 1.0;
  if (u == "micrometers" || u == "micrometres" || u == "microns" || u == "um" || u == "micrometer")
    scale = 1000.0;
  else if (u == "nanometers" || u == "nanometres" || u == "nm" || u == "nanometer")
    scale = 1.0;
  else if (!wavelength.empty() && *std::max_element(wavelength.begin(), wavelength.end()) < 100.0)
    scale = 1000.0;
  std::vector<double> nm(wavelength);
  for (double& w : nm) w *= scale;
  return nm;
}

BandMap map_bands(const std::vector<double>& source_nm, const std::vector<std::uint8_t>& source_gap,
                  const std::vector<double>& target_nm, const std::vector<double>& target_fwhm_nm, Resampling how) {
  const Axis axis = make_axis(source_nm, source_gap);
  const bool widths = target_fwhm_nm.size() == target_nm.size() && !target_nm.empty();
  BandMap map;
  map.method = how == Resampling::automatic && all_matched(axis, target_nm)       ? "matched"
               : how != Resampling::linear && widths                                    ? "gaussian"
                                                                                        : "linear";
  for (std::size_t f = 0; f < target_nm.size(); ++f) {
    if (map.method == "matched") map.bands.push_back(matched_weights(axis, target_nm[f]));
    else if (map.method == "gaussian") map.bands.push_back(gaussian_weights(axis, target_nm[f], target_fwhm_nm[f]));
    else map.bands.push_back(linear_weights(axis, target_nm[f]));
  }
  return map;
}

}  // namespace hb::io
