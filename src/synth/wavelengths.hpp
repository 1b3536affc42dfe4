// Band centres and widths of an AVIRIS-Classic-like sensor: four grating spectrometers
// (A: VNIR, B: NIR, C: SWIR-1, D: SWIR-2) covering about 365-2500 nm at about 10 nm.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace hb::synth {

struct BandSet {
  std::vector<double> centre_nm;
  std::vector<double> fwhm_nm;
  std::int64_t size() const { return static_cast<std::int64_t>(centre_nm.size()); }
};

inline constexpr std::int64_t kAvirisClassicBands = 224;

// `bands` centres, increasing. 224 gives the AVIRIS-Classic layout; other counts
// resample the same curve over the same range (FWHM never narrower than the spacing).
BandSet aviris_classic_bands(std::int64_t bands);

// The band-average of f under a Gaussian spectral response of the given FWHM: what a
// band actually measures of a spectrum with features narrower than the band.
template <class F>
double band_average(F&& f, double centre_nm, double fwhm_nm) {
  constexpr int kHalfSteps = 10;                 // 21 samples over +-2.5 sigma
  const double sigma = fwhm_nm / 2.3548200450309493;
  double sum = 0.0;
  double weight_sum = 0.0;
  for (int i = -kHalfSteps; i <= kHalfSteps; ++i) {
    const double z = 2.5 * i / kHalfSteps;
    const double weight = std::exp(-0.5 * z * z);
    sum += weight * f(centre_nm + z * sigma);
    weight_sum += weight;
  }
  return sum / weight_sum;
}

}  // namespace hb::synth
