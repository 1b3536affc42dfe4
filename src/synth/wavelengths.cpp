#include "src/synth/wavelengths.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace hb::synth {
namespace {

// One grating spectrometer: band count, first and last centre, FWHM at either end.
struct Spectrometer {
  int bands;
  double first_nm;
  double last_nm;
  double first_fwhm_nm;
  double last_fwhm_nm;
};

// Spacing and widths in the style of AVIRIS-Classic calibration files (the junctions
// between spectrometers have slightly uneven steps, as in the real instrument).
constexpr std::array<Spectrometer, 4> kSpectrometers{{
    {32, 365.9, 662.9, 10.4, 9.6},    // A: silicon VNIR
    {64, 671.4, 1275.6, 9.4, 9.9},    // B: silicon NIR
    {64, 1283.0, 1871.9, 10.8, 10.0}, // C: InSb SWIR-1
    {64, 1881.0, 2496.0, 11.3, 10.2}, // D: InSb SWIR-2
}};

struct Band {
  double centre_nm;
  double fwhm_nm;
};

Band classic_band(int index) {
  for (const auto& s : kSpectrometers) {
    if (index < s.bands) {
      const double t = static_cast<double>(index) / (s.bands - 1);
      return {s.first_nm + t * (s.last_nm - s.first_nm), s.first_fwhm_nm + t * (s.last_fwhm_nm - s.first_fwhm_nm)};
    }
    index -= s.bands;
  }
  return classic_band(kAvirisClassicBands - 1);
}

// The classic curve at a fractional band position in [0, 223].
Band classic_band_at(double position) {
  const int below = std::clamp(static_cast<int>(position), 0, static_cast<int>(kAvirisClassicBands) - 2);
  const double t = position - below;
  const Band a = classic_band(below);
  const Band b = classic_band(below + 1);
  return {a.centre_nm + t * (b.centre_nm - a.centre_nm), a.fwhm_nm + t * (b.fwhm_nm - a.fwhm_nm)};
}

}  // namespace

const std::array<ResponseSample, 21>& gaussian_response() {
  static const std::array<ResponseSample, 21> samples = [] {
    std::array<ResponseSample, 21> r{};
    double total = 0.0;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const double z = 2.5 * (static_cast<double>(i) - 10.0) / 10.0;
      r[i] = {z, std::exp(-0.5 * z * z)};
      total += r[i].weight;
    }
    for (auto& sample : r) sample.weight /= total;
    return r;
  }();
  return samples;
}

BandSet aviris_classic_bands(std::int64_t bands) {
  BandSet set;
  const auto count = static_cast<std::size_t>(std::max<std::int64_t>(bands, 0));
  set.centre_nm.resize(count);
  set.fwhm_nm.resize(count);
  const double last = static_cast<double>(kAvirisClassicBands - 1);
  for (std::size_t i = 0; i < count; ++i) {
    const double position = count == 1 ? last / 2 : last * static_cast<double>(i) / static_cast<double>(count - 1);
    const Band band = classic_band_at(position);
    set.centre_nm[i] = band.centre_nm;
    set.fwhm_nm[i] = band.fwhm_nm;
  }
  // Coarser sampling than the instrument: widen the bands so that they still tile the range.
  for (std::size_t i = 0; i + 1 < count; ++i) {
    const double spacing = set.centre_nm[i + 1] - set.centre_nm[i];
    set.fwhm_nm[i] = std::max(set.fwhm_nm[i], spacing);
    set.fwhm_nm[i + 1] = std::max(set.fwhm_nm[i + 1], spacing);
  }
  return set;
}

}  // namespace hb::synth
