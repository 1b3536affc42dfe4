#include "src/synth/model.hpp"

#include <algorithm>
#include <cassert>
#include <system_error>
#include <thread>

#include "src/synth/atmosphere.hpp"
#include "src/synth/noise.hpp"

namespace hb::synth {
namespace {

// Each band's response samples: wavelength and weight x transmittance, computed once
// and shared by every material (the atmosphere is the costly part).
struct BandResponse {
  std::vector<double> nm;
  std::vector<double> weighted_transmittance;
};

BandResponse band_response(const BandSet& set) {
  BandResponse response;
  for (std::size_t b = 0; b < set.centre_nm.size(); ++b) {
    for (const ResponseSample& r : gaussian_response()) {
      const double nm = set.centre_nm[b] + r.offset_sigmas * fwhm_to_sigma(set.fwhm_nm[b]);
      response.nm.push_back(nm);
      response.weighted_transmittance.push_back(r.weight * atmospheric_transmittance(nm));
    }
  }
  return response;
}

std::vector<double> band_transmittance(const BandSet& set) {
  const BandResponse response = band_response(set);
  const std::size_t per_band = gaussian_response().size();
  std::vector<double> t(set.centre_nm.size(), 0.0);
  for (std::size_t i = 0; i < response.nm.size(); ++i) t[i / per_band] += response.weighted_transmittance[i];
  return t;
}

std::vector<float> material_signal_dn(const std::vector<Material>& materials, const BandSet& set) {
  const BandResponse response = band_response(set);
  const std::size_t per_band = gaussian_response().size();
  const std::size_t bands = set.centre_nm.size();
  std::vector<float> signal(materials.size() * bands);
  for (std::size_t c = 0; c < materials.size(); ++c) {
    for (std::size_t b = 0; b < bands; ++b) {
      double apparent = 0.0;  // band average of reflectance x transmittance
      for (std::size_t i = b * per_band; i < (b + 1) * per_band; ++i)
        apparent += response.weighted_transmittance[i] * reflectance(materials[c], response.nm[i]);
      signal[c * bands + b] = static_cast<float>(kReflectanceScale * apparent);
    }
  }
  return signal;
}

std::vector<float> band_sigma_dn(const BandSet& set, const std::vector<double>& transmittance, double scale) {
  std::vector<float> sigma(set.centre_nm.size());
  for (std::size_t b = 0; b < sigma.size(); ++b)
    sigma[b] = static_cast<float>(scale * noise_sigma_dn(set.centre_nm[b], transmittance[b]));
  return sigma;
}

struct Scratch {
  explicit Scratch(std::size_t bands)
      : radius_bits((bands + 1) / 2), angle_bits(radius_bits.size()), normals(2 * radius_bits.size()) {}
  std::vector<std::uint32_t> radius_bits;  // one 48-bit draw per pair of bands
  std::vector<std::uint32_t> angle_bits;
  std::vector<float> normals;
};

// Round to nearest and keep clear of the fill value: corrected reflectance may dip below
// zero in noisy bands, and clipping at 0 would bias their mean.
std::int16_t to_dn(float value) {
  constexpr float kLowest = static_cast<float>(kFillValue) + 1.0f;
  const float above = value < kLowest ? kLowest : value;
  const float clamped = above > 32767.0f ? 32767.0f : above;
  return static_cast<std::int16_t>(static_cast<std::int32_t>(clamped + 10000.5f) - 10000);
}

// Standard normals for every band of one pixel, from counters (pixel key, pair): pair p
// feeds bands p and p + pairs. Split into simple loops so that the float part vectorises.
void pixel_normals(std::uint64_t key, Scratch& scratch) {
  const std::size_t pairs = scratch.radius_bits.size();
  for (std::size_t p = 0; p < pairs; ++p) {
    const std::uint64_t bits = sequence(key, p);
    scratch.radius_bits[p] = radius_bits(bits);
    scratch.angle_bits[p] = angle_bits(bits);
  }
  const std::uint32_t* radius = scratch.radius_bits.data();
  const std::uint32_t* angle = scratch.angle_bits.data();
  float* first = scratch.normals.data();
  float* second = scratch.normals.data() + pairs;
  for (std::size_t p = 0; p < pairs; ++p) {
    const NormalPair n = normal_pair(radius[p], angle[p]);
    first[p] = n.first;
    second[p] = n.second;
  }
}

// One valid pixel: mixture, brightness, detector response and noise for every band.
void generate_pixel(const SceneModel& m, const PixelCover& cover, std::int64_t line, std::int64_t sample,
                    Scratch& scratch, std::int16_t* out) {
  const auto bands = static_cast<std::size_t>(m.bands());
  const float* primary = m.signal_dn.data() + static_cast<std::size_t>(cover.primary) * bands;
  const float* secondary = m.signal_dn.data() + static_cast<std::size_t>(cover.secondary) * bands;
  const float* gain = m.striping.gain.data() + static_cast<std::size_t>(sample) * bands;
  const float* offset = m.striping.offset_dn.data() + static_cast<std::size_t>(sample) * bands;
  const float* sigma = m.sigma_dn.data();
  const float* normals = scratch.normals.data();
  pixel_normals(hash(m.noise_key, static_cast<std::uint64_t>(line), static_cast<std::uint64_t>(sample)), scratch);
  const float w = cover.secondary_weight;
  const float brightness = cover.brightness;
  for (std::size_t b = 0; b < bands; ++b) {
    const float mixed = primary[b] + w * (secondary[b] - primary[b]);
    out[b] = to_dn(brightness * mixed * gain[b] + offset[b] + sigma[b] * normals[b]);
  }
}

// Pixels [first, last) of a row range, counted from its first row.
void generate_pixels(const SceneModel& m, RowRange rows, std::span<std::int16_t> pixels_bip,
                     std::span<std::uint8_t> truth, std::size_t first, std::size_t last) {
  const auto samples = static_cast<std::size_t>(m.samples());
  const auto bands = static_cast<std::size_t>(m.bands());
  Scratch scratch(bands);
  for (std::size_t pixel = first; pixel < last; ++pixel) {
    const auto line = rows.begin + static_cast<std::int64_t>(pixel / samples);
    const auto sample = static_cast<std::int64_t>(pixel % samples);
    std::int16_t* out = pixels_bip.data() + pixel * bands;
    const PixelCover cover = m.layout.at(line, sample);
    if (cover.fill) {
      std::fill(out, out + bands, kFillValue);
      truth[pixel] = 0;
      continue;
    }
    truth[pixel] = static_cast<std::uint8_t>(cover.primary + 1);
    generate_pixel(m, cover, line, sample, scratch, out);
  }
}

constexpr std::size_t kMinPixelsPerThread = 4096;  // below this a thread costs more than it saves

}  // namespace

SceneModel::SceneModel(const SynthOptions& opts, const SceneParams& scene_params)
    : options(opts),
      params(scene_params),
      wavelengths(aviris_classic_bands(opts.bands)),
      transmittance(band_transmittance(wavelengths)),
      materials(choose_materials(opts.classes, opts.seed)),
      signal_dn(material_signal_dn(materials, wavelengths)),
      sigma_dn(band_sigma_dn(wavelengths, transmittance, scene_params.noise)),
      striping(make_striping(opts.samples, sigma_dn, scene_params.striping, opts.seed)),
      layout(opts.lines, opts.samples, opts.classes, opts.seed, opts.fill_border, scene_params.layout),
      noise_key(stream_key(opts.seed, Stream::pixel_noise)) {}

void generate_rows(const SceneModel& m, RowRange rows, std::span<std::int16_t> pixels_bip,
                   std::span<std::uint8_t> truth, int threads) {
  const auto pixels = static_cast<std::size_t>(rows.rows() * m.samples());
  assert(rows.begin >= 0 && rows.end <= m.lines());
  assert(pixels_bip.size() == pixels * static_cast<std::size_t>(m.bands()));
  assert(truth.size() == pixels);
  // Every pixel is independent, so any split gives the same bytes.
  const std::size_t workers = std::clamp<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), 1,
                                                      std::max<std::size_t>(pixels / kMinPixelsPerThread, 1));
  std::vector<std::thread> pool;
  std::size_t first = 0;
  try {
    for (std::size_t w = 1; w < workers; ++w) {
      const std::size_t last = pixels * w / workers;
      pool.emplace_back([=, &m] { generate_pixels(m, rows, pixels_bip, truth, first, last); });
      first = last;
    }
  } catch (const std::system_error&) {  // fewer threads than asked: this one does the rest
  }
  generate_pixels(m, rows, pixels_bip, truth, first, pixels);
  for (auto& t : pool) t.join();
}

std::vector<float> material_library(const SceneModel& m) {
  std::vector<float> library(m.signal_dn.size());
  std::transform(m.signal_dn.begin(), m.signal_dn.end(), library.begin(),
                 [](float dn) { return dn / kReflectanceScale; });
  return library;
}

}  // namespace hb::synth
