#include "src/sam/resample.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/core.h>

#include "io/resample.hpp"
#include "src/classify/features.hpp"

namespace hb::sam {
namespace {

using Weights = io::BandWeights;

double value(const SpectralLibrary& lib, std::int64_t spectrum, std::int64_t channel) {
  return lib.spectra[static_cast<std::size_t>(spectrum * lib.channels + channel)];
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
    const auto library_nm = to_nanometres(lib.wavelength, lib.wavelength_units);
    const bool scene_fwhm = static_cast<std::int64_t>(scene.meta.fwhm.size()) == scene.shape.bands;
    if (how == Resampling::gaussian && !scene_fwhm)
      return bad_input(scene_path, "fwhm", "Gaussian resampling needs the scene's band widths (fwhm)");
    // FWHM is in the units of the centres: the same scale applies.
    const double scale = good.wavelength.front() != 0 ? centres.front() / good.wavelength.front() : 1.0;
    std::vector<double> fwhm;
    if (scene_fwhm)
      for (const auto b : good.bands) fwhm.push_back(scale * scene.meta.fwhm[static_cast<std::size_t>(b)]);
    auto map = io::map_bands(library_nm, lib.gap, centres, fwhm, how);
    out.method = map.method;
    const auto& per_band = map.bands;
    apply(lib, good, per_band, out);
    out.wavelength_nm = {};
    for (const auto b : out.bands)
      out.wavelength_nm.push_back(centres[static_cast<std::size_t>(std::find(good.bands.begin(), good.bands.end(), b) - good.bands.begin())]);
    if (out.bands.empty())
      return bad_input(lib.source, "wavelength",
                       fmt::format("covers none of the scene's bands (library {:.1f}-{:.1f} nm, scene {:.1f}-{:.1f} nm)",
                                   *std::min_element(library_nm.begin(), library_nm.end()),
                                   *std::max_element(library_nm.begin(), library_nm.end()),
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
