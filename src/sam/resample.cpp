#include "src/sam/resample.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/core.h>

#include "src/classify/features.hpp"

namespace hb::sam {
namespace {

constexpr double kMatchNm = 0.01;
constexpr double kFwhmToSigma = 2.3548200450309493;  // 2 sqrt(2 ln 2)

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

struct Channel {
  double nm = 0;
  std::int64_t index = 0;  // library channel
  bool gap = false;
};

// The library's channels by wavelength (AVIRIS libraries step back where the
// spectrometers overlap); the usable ones (no gap) with their trapezoid widths.
struct Axis {
  std::vector<Channel> all;
  std::vector<Channel> usable;
  std::vector<double> width_nm;
};

Axis make_axis(const SpectralLibrary& lib, const std::vector<double>& nm) {
  Axis axis;
  for (std::int64_t c = 0; c < lib.channels; ++c)
    axis.all.push_back({nm[static_cast<std::size_t>(c)], c, lib.gap[static_cast<std::size_t>(c)] != 0});
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

double value(const SpectralLibrary& lib, std::int64_t spectrum, std::int64_t channel) {
  return lib.spectra[static_cast<std::size_t>(spectrum * lib.channels + channel)];
}

// One scene band as weights over library channels; nullopt when the library does not cover it.
using Weights = std::vector<std::pair<std::int64_t, double>>;

std::optional<Weights> linear_weights(const Axis& axis, double centre) {
  const auto& all = axis.all;
  const auto above = std::upper_bound(all.begin(), all.end(), centre, [](double c, const Channel& ch) { return c < ch.nm; });
  if (above == all.begin()) return std::nullopt;
  const Channel& left = *(above - 1);
  if (left.nm == centre) return left.gap ? std::nullopt : std::optional<Weights>(Weights{{left.index, 1.0}});
  if (above == all.end() || left.gap || above->gap) return std::nullopt;
  const double t = (centre - left.nm) / (above->nm - left.nm);
  return Weights{{left.index, 1.0 - t}, {above->index, t}};
}

std::optional<Weights> gaussian_weights(const Axis& axis, double centre, double fwhm) {
  if (axis.usable.empty() || centre < axis.all.front().nm || centre > axis.all.back().nm) return std::nullopt;
  for (const auto& ch : axis.all)
    if (ch.gap && std::abs(ch.nm - centre) <= fwhm) return std::nullopt;
  const double sigma = fwhm / kFwhmToSigma;
  Weights w;
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

std::optional<Weights> matched_weights(const Axis& axis, double centre) {
  for (const auto& ch : axis.all)
    if (std::abs(ch.nm - centre) < kMatchNm) return ch.gap ? std::nullopt : std::optional<Weights>(Weights{{ch.index, 1.0}});
  return std::nullopt;
}

bool all_matched(const Axis& axis, const std::vector<double>& centres) {
  return std::all_of(centres.begin(), centres.end(), [&](double c) {
    return std::any_of(axis.all.begin(), axis.all.end(), [&](const Channel& ch) { return std::abs(ch.nm - c) < kMatchNm; });
  });
}

// Applies per-band weights (nullopt = excluded) to every spectrum.
void apply(const SpectralLibrary& lib, const classify::BandSelection& good,
           const std::vector<std::optional<Weights>>& per_band, ResampledLibrary& out) {
  for (std::size_t f = 0; f < per_band.size(); ++f) {
    if (per_band[f]) {
      out.bands.push_back(good.bands[f]);
      if (!good.wavelength.empty()) out.wavelength_nm.push_back(good.wavelength[f]);
    } else {
      out.excluded.push_back(good.bands[f]);
    }
  }
  for (std::int64_t i = 0; i < lib.count(); ++i)
    for (const auto& w : per_band) {
      if (!w) continue;
      double v = 0;
      for (const auto& [channel, weight] : *w) v += weight * value(lib, i, channel);
      out.spectra.push_back(v);
    }
}

// Neither side (or only one) has band centres: pair channels with scene bands by position.
Result<std::vector<std::optional<Weights>>> pair_by_channel(const SpectralLibrary& lib, const io::CubeInfo& scene,
                                                            const classify::BandSelection& good) {
  std::vector<std::optional<Weights>> per_band;
  const bool per_scene_band = lib.channels == scene.shape.bands;
  if (!per_scene_band && lib.channels != good.dims())
    return bad_input(lib.source, "wavelength",
                     fmt::format("no band centres to resample with, and {} channels for the scene's {} bands ({} good)",
                                 lib.channels, scene.shape.bands, good.dims()));
  for (std::size_t f = 0; f < good.bands.size(); ++f) {
    const auto channel = per_scene_band ? good.bands[f] : static_cast<std::int64_t>(f);
    per_band.push_back(lib.gap[static_cast<std::size_t>(channel)] ? std::nullopt
                                                                   : std::optional<Weights>(Weights{{channel, 1.0}}));
  }
  return per_band;
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

std::string band_list(const std::vector<std::int64_t>& bands) {
  std::string out;
  for (std::size_t i = 0; i < bands.size();) {
    std::size_t j = i;
    while (j + 1 < bands.size() && bands[j + 1] == bands[j] + 1) ++j;
    if (!out.empty()) out += ", ";
    out += j == i ? fmt::format("{}", bands[i] + 1) : fmt::format("{}-{}", bands[i] + 1, bands[j] + 1);
    i = j + 1;
  }
  return out;
}

Result<ResampledLibrary> resample_to_scene(const SpectralLibrary& lib, const io::CubeInfo& scene,
                                           const std::string& scene_path, Resampling how) {
  ResampledLibrary out;
  out.names = lib.names;
  out.lookup = lib.lookup;
  const auto good = classify::select_good_bands(scene);
  if (good.dims() == 0) return bad_input(scene_path, "bbl", "every band is marked bad");
  const bool scene_wl = static_cast<std::int64_t>(scene.meta.wavelength.size()) == scene.shape.bands;
  const bool lib_wl = static_cast<std::int64_t>(lib.wavelength.size()) == lib.channels;
  if (!lib.scene_bands.empty()) {
    out.method = "scene bands";
    out.bands = lib.scene_bands;
    out.spectra = lib.spectra;
    if (scene_wl) out.wavelength_nm = to_nanometres(good.wavelength, scene.meta.wavelength_units);
  } else if (!scene_wl || !lib_wl) {
    if (how != Resampling::automatic)
      return bad_input(scene_wl ? lib.source : scene_path, "wavelength", "resampling needs band centres on both sides");
    auto per_band = pair_by_channel(lib, scene, good);
    if (!per_band) return per_band.error();
    out.method = "channels";
    apply(lib, good, *per_band, out);
  } else {
    const auto centres = to_nanometres(good.wavelength, scene.meta.wavelength_units);
    const Axis axis = make_axis(lib, to_nanometres(lib.wavelength, lib.wavelength_units));
    const bool scene_fwhm = static_cast<std::int64_t>(scene.meta.fwhm.size()) == scene.shape.bands;
    if (how == Resampling::gaussian && !scene_fwhm)
      return bad_input(scene_path, "fwhm", "Gaussian resampling needs the scene's band widths (fwhm)");
    out.method = how == Resampling::automatic && all_matched(axis, centres) ? "matched"
                 : how == Resampling::gaussian || (how == Resampling::automatic && scene_fwhm) ? "gaussian"
                                                                                               : "linear";
    // FWHM is in the units of the centres: the same scale applies.
    const double scale = good.wavelength.front() != 0 ? centres.front() / good.wavelength.front() : 1.0;
    std::vector<double> fwhm;
    if (scene_fwhm)
      for (const auto b : good.bands) fwhm.push_back(scale * scene.meta.fwhm[static_cast<std::size_t>(b)]);
    std::vector<std::optional<Weights>> per_band;
    for (std::size_t f = 0; f < centres.size(); ++f) {
      if (out.method == "matched") per_band.push_back(matched_weights(axis, centres[f]));
      else if (out.method == "gaussian") per_band.push_back(gaussian_weights(axis, centres[f], fwhm[f]));
      else per_band.push_back(linear_weights(axis, centres[f]));
    }
    apply(lib, good, per_band, out);
    out.wavelength_nm = {};
    for (const auto b : out.bands)
      out.wavelength_nm.push_back(centres[static_cast<std::size_t>(std::find(good.bands.begin(), good.bands.end(), b) - good.bands.begin())]);
    if (out.bands.empty())
      return bad_input(lib.source, "wavelength",
                       fmt::format("covers none of the scene's bands (library {:.1f}-{:.1f} nm, scene {:.1f}-{:.1f} nm)",
                                   axis.all.front().nm, axis.all.back().nm,
                                   *std::min_element(centres.begin(), centres.end()),
                                   *std::max_element(centres.begin(), centres.end())));
  }
  if (out.bands.empty()) return bad_input(lib.source, "bbl", "no usable channel pairs with a good scene band");
  for (std::int64_t i = 0; i < out.count(); ++i) {
    double norm = 0;
    for (std::int64_t f = 0; f < out.dims(); ++f) norm += std::abs(out.spectra[static_cast<std::size_t>(i * out.dims() + f)]);
    if (norm == 0 || !std::isfinite(norm))
      return bad_input(lib.source, "spectra",
                       fmt::format("'{}' is {} on every compared band", out.names[static_cast<std::size_t>(i)],
                                   norm == 0 ? "zero" : "not finite"));
  }
  return out;
}

}  // namespace hb::sam
