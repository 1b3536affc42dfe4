// Band resampling: the rules that put spectra measured on one set of bands onto
// another (SAM libraries onto a scene, src/sam/resample.hpp; whole scenes onto one
// scene's bands, io/resample_view.hpp). Written once here, for both.
//   * matched: every target centre equals a source band centre (within 0.01 nm): that
//     band is taken as it is (a source already convolved to the sensor).
//   * gaussian (the target has FWHM): value = sum_j g(l_j) r_j dl_j / sum_j g(l_j) dl_j over
//     the source's usable bands, g the target band's Gaussian response (sigma = FWHM /
//     2.3548) cut at 3 sigma, dl_j the source band spacing (trapezoid weights).
//   * linear: np.interp over the source's usable bands sorted by wavelength.
// A target band whose centre lies outside the source's range, or next to a source gap
// (a band no spectrum can use; for gaussian: a gap within one FWHM), is not covered.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hb::io {

enum class Resampling { automatic, linear, gaussian };

// One target band as weights over source bands (index, weight); the weights sum to 1.
using BandWeights = std::vector<std::pair<std::int64_t, double>>;

struct BandMap {
  std::string method;                            // "matched", "gaussian" or "linear"
  std::vector<std::optional<BandWeights>> bands;  // per target band; nullopt = not covered
};

// Band centres in nanometres: `units` as ENVI writes them (Nanometers, Micrometers, um,
// nm, ...); empty or unknown units are guessed from the values (< 100 = micrometres).
std::vector<double> to_nanometres(const std::vector<double>& wavelength, const std::string& units);

// The weights that take source bands (centres in nm, gap = 1 where unusable) to the
// target's centres. `target_fwhm_nm` is empty or one width per target band; automatic
// picks matched, else gaussian when widths are known, else linear.
BandMap map_bands(const std::vector<double>& source_nm, const std::vector<std::uint8_t>& source_gap,
                  const std::vector<double>& target_nm, const std::vector<double>& target_fwhm_nm,
                  Resampling how = Resampling::automatic);

}  // namespace hb::io
