// The instrument's imprint on the synthetic scene: band-dependent random noise and the
// fixed per-detector gain/offset errors that show as along-track stripes.
#pragma once

#include <cstdint>
#include <vector>

#include "src/synth/wavelengths.hpp"

namespace hb::synth {

// Noise standard deviation in reflectance DN (reflectance x 10000) of a band: lowest in
// the VNIR, higher in the SWIR spectrometers, highest at both ends of the range and
// where the atmosphere leaves little signal (`transmittance` of the band).
double noise_sigma_dn(double centre_nm, double transmittance);

// Per-(sample, band) detector response: value = gain * signal + offset, constant along
// the flight direction. Tables are samples x bands, row-major.
struct Striping {
  std::vector<float> gain;
  std::vector<float> offset_dn;
};

// `strength` scales the errors (0 = a perfectly flat-fielded instrument).
Striping make_striping(std::int64_t samples, const std::vector<float>& sigma_dn, double strength, std::uint64_t seed);

}  // namespace hb::synth
