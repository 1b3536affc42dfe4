// Band centres and widths of an AVIRIS-Classic-like sensor: four grating spectrometers
// (A: VNIR, B: NIR, C: SWIR-1, D: SWIR-2) covering about 365-2500 nm at about 10 nm.
#pragma once

#include <array>
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

// A Gaussian spectral response sampled at 21 points over +-2.5 sigma; weights sum to 1.
struct ResponseSample {
  double offset_sigmas;
  double weight;
};
const std::array<ResponseSample, 21>& gaussian_response();

inline double fwhm_to_sigma(double fwhm_nm) { return fwhm_nm / 2.3548200450309493; }

// The band-average of f under the band's Gaussian response: what a band actually
// measures of a spectrum with features narrower than the band.
template <class F>
double band_average(F&& f, double centre_nm, double fwhm_nm) {
  const double sigma = fwhm_to_sigma(fwhm_nm);
  double sum = 0.0;
  for (const ResponseSample& r : gaussian_response()) sum += r.weight * f(centre_nm + r.offset_sigmas * sigma);
  return sum;
}

}  // namespace hb::synth
