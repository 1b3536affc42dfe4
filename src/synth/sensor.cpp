#include "src/synth/sensor.hpp"

#include <cmath>

#include "src/synth/noise.hpp"

namespace hb::synth {

double noise_sigma_dn(double centre_nm, double transmittance) {
  const double floor_dn = 5.0;                                          // SNR ~ 600 at 0.3 reflectance
  const double blue_end = 12.0 * std::exp(-(centre_nm - 365.0) / 45.0);  // weak solar flux, poor silicon QE
  const double swir = 5.0 / (1.0 + std::exp(-(centre_nm - 1250.0) / 60.0));  // InSb spectrometers
  const double far_end = 25.0 * std::exp((centre_nm - 2500.0) / 60.0);  // little solar flux at 2.5 um
  const double low_signal = 1.0 + 1.5 * (1.0 - transmittance);          // correction amplifies noise
  return (floor_dn + blue_end + swir + far_end) * low_signal;
}

Striping make_striping(std::int64_t samples, const std::vector<float>& sigma_dn, double strength, std::uint64_t seed) {
  const auto bands = static_cast<std::int64_t>(sigma_dn.size());
  const std::uint64_t gain_key = stream_key(seed, Stream::stripe_gain);
  const std::uint64_t offset_key = stream_key(seed, Stream::stripe_offset);
  Striping striping;
  striping.gain.resize(static_cast<std::size_t>(samples * bands));
  striping.offset_dn.resize(striping.gain.size());
  for (std::int64_t s = 0; s < samples; ++s) {
    for (std::int64_t b = 0; b < bands; ++b) {
      const auto i = static_cast<std::size_t>(s * bands + b);
      const NormalPair n{normal_pair(hash(gain_key, static_cast<std::uint64_t>(s), static_cast<std::uint64_t>(b))).first,
                         normal_pair(hash(offset_key, static_cast<std::uint64_t>(s), static_cast<std::uint64_t>(b))).first};
      // Gain errors of a few tenths of a percent; offsets of about half the random noise.
      striping.gain[i] = static_cast<float>(1.0 + strength * 0.003 * n.first);
      striping.offset_dn[i] = static_cast<float>(strength * 0.6 * sigma_dn[static_cast<std::size_t>(b)] * n.second);
    }
  }
  return striping;
}

}  // namespace hb::synth
