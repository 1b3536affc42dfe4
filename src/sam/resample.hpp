// The library on the scene's bands. Rules, in order:
//   * class means (library.scene_bands set): already on the scene's good bands.
//   * neither side has wavelengths: the library must have one channel per scene band
//     (or per good band); it is taken channel by channel.
//   * matched: every good scene band centre equals a library channel centre (within
//     0.01 nm): that channel is taken as it is (a library already convolved to the sensor).
//   * gaussian (the scene has FWHM): value = sum_j g(l_j) r_j dl_j / sum_j g(l_j) dl_j over
//     the library's usable channels, g the scene band's Gaussian response (sigma = FWHM /
//     2.3548) cut at 3 sigma, dl_j the library channel spacing (trapezoid weights).
//   * linear: np.interp over the library's usable channels sorted by wavelength.
// Scene bands are compared only where the library covers them: a band whose centre
// lies outside the library's range, or next to a library gap (bbl 0, non-finite or
// deleted values; for gaussian: a gap within one FWHM), is excluded and named in a
// warning. Wavelengths in micrometres are converted to nanometres; units are guessed
// from the values (< 100 = micrometres) where the file does not say.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/metadata.hpp"
#include "io/resample.hpp"
#include "src/sam/library.hpp"

namespace hb::sam {

using Resampling = io::Resampling;

struct ResampledLibrary {
  std::vector<std::string> names;
  std::vector<int> lookup;
  std::vector<std::int64_t> bands;     // scene bands compared, ascending
  std::vector<double> wavelength_nm;   // of those bands, empty when unknown
  std::vector<double> spectra;         // [count, bands.size()]
  std::vector<std::int64_t> excluded;  // good scene bands the library does not cover
  std::string method;                  // "scene bands", "channels", "matched", "gaussian", "linear"

  std::int64_t dims() const { return static_cast<std::int64_t>(bands.size()); }
  std::int64_t count() const { return dims() > 0 ? static_cast<std::int64_t>(spectra.size()) / dims() : 0; }
};

using io::to_nanometres;  // band centres in nanometres (io/resample.hpp)

// Errors name the library or scene file and the field at fault (wavelength, fwhm,
// spectra): no overlap at all, a zero spectrum on the compared bands, channel counts
// that cannot be paired.
Result<ResampledLibrary> resample_to_scene(const SpectralLibrary& library, const io::CubeInfo& scene,
                                           const std::string& scene_path, Resampling how = Resampling::automatic);

// "1-3, 108, 220-224" (1-based band numbers), for messages.
std::string band_list(const std::vector<std::int64_t>& bands);

}  // namespace hb::sam
