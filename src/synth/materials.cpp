#include "src/synth/materials.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "src/synth/noise.hpp"

namespace hb::synth {
namespace {

double gauss(double nm, double centre, double width) {
  const double x = (nm - centre) / width;
  return std::exp(-0.5 * x * x);
}
double sigmoid(double nm, double centre, double width) { return 1.0 / (1.0 + std::exp(-(nm - centre) / width)); }
// Multiplicative absorption band: 1 - depth at the centre.
double band(double nm, double centre, double width, double depth) { return 1.0 - depth * gauss(nm, centre, width); }

double green_vegetation(double nm) {
  // Chlorophyll absorbs blue and red around a green peak; the red edge rises to the
  // NIR plateau of leaf scattering; leaf water absorbs at 970, 1200, 1450 and 1940 nm.
  const double visible = 0.03 + 0.075 * gauss(nm, 550.0, 32.0) + 0.01 * gauss(nm, 380.0, 20.0);
  const double water_depth = 0.05 * gauss(nm, 975.0, 25.0) + 0.12 * gauss(nm, 1180.0, 40.0) +
                             1.0 * gauss(nm, 1450.0, 70.0) + 1.6 * gauss(nm, 1940.0, 90.0) +
                             0.35 * sigmoid(nm, 1300.0, 150.0) + 0.5 * sigmoid(nm, 2100.0, 150.0);
  const double infrared = 0.50 * std::exp(-water_depth);
  const double edge = sigmoid(nm, 718.0, 14.0);
  return visible * (1.0 - edge) + infrared * edge;
}

double dry_grass(double nm) {
  // Non-photosynthetic vegetation: no red edge, cellulose/lignin at 2100 and 1730 nm.
  const double continuum = 0.07 + 0.35 * (1.0 - std::exp(-(nm - 350.0) / 450.0));
  return continuum * band(nm, 2100.0, 45.0, 0.18) * band(nm, 1730.0, 25.0, 0.05) * band(nm, 1450.0, 60.0, 0.12) *
         band(nm, 1940.0, 70.0, 0.18) * band(nm, 2300.0, 40.0, 0.08) * (1.0 - 0.15 * sigmoid(nm, 2350.0, 60.0));
}

double dry_soil(double nm) {
  // A smooth rise from the blue (iron coatings), bound water at 1400/1900 nm, clay Al-OH at 2200 nm.
  const double continuum = 0.06 + 0.33 * (1.0 - std::exp(-(nm - 350.0) / 520.0));
  return continuum * band(nm, 900.0, 80.0, 0.05) * band(nm, 1415.0, 30.0, 0.08) * band(nm, 1915.0, 40.0, 0.12) *
         band(nm, 2205.0, 25.0, 0.12) * (1.0 - 0.10 * sigmoid(nm, 2380.0, 50.0));
}

double water(double nm) {
  // Clear water: a little blue-green backscatter, nothing beyond the NIR.
  const double x = (nm - 460.0) / 230.0;
  return 0.003 + 0.05 * std::exp(-x * x);
}

double limestone(double nm) {
  // Bright calcite: the CO3 overtone at 2340 nm and a weaker one at 2160 nm.
  const double continuum = 0.32 + 0.30 * (1.0 - std::exp(-(nm - 350.0) / 300.0));
  return continuum * band(nm, 2340.0, 28.0, 0.28) * band(nm, 2160.0, 20.0, 0.06) * band(nm, 1995.0, 30.0, 0.05) *
         band(nm, 1900.0, 40.0, 0.06);
}

double asphalt(double nm) {
  // Dark, slowly brightening with wavelength; hydrocarbon features at 1730 and 2310 nm.
  const double continuum = 0.05 + 0.07 * (nm - 350.0) / 2150.0;
  return continuum * band(nm, 1730.0, 20.0, 0.04) * band(nm, 2310.0, 25.0, 0.06);
}

double iron_oxide_rock(double nm) {
  // Hematite-rich: the Fe3+ charge-transfer edge near 550 nm and crystal-field band near 880 nm.
  const double continuum = 0.06 + 0.30 * sigmoid(nm, 580.0, 35.0) + 0.06 * sigmoid(nm, 1100.0, 150.0);
  return continuum * band(nm, 880.0, 90.0, 0.30) * band(nm, 2200.0, 30.0, 0.04);
}

double concrete(double nm) {
  // Bright grey, flat beyond the visible; a little bound water and carbonate.
  const double continuum = 0.22 + 0.14 * (1.0 - std::exp(-(nm - 350.0) / 200.0));
  return continuum * band(nm, 1920.0, 40.0, 0.05) * band(nm, 2340.0, 30.0, 0.05);
}

double kaolinite(double nm) {
  // A bright clay: the 2165/2205 nm Al-OH doublet and the 1395/1415 nm OH doublet.
  const double continuum = 0.45 + 0.30 * (1.0 - std::exp(-(nm - 350.0) / 250.0));
  return continuum * band(nm, 2165.0, 14.0, 0.15) * band(nm, 2205.0, 16.0, 0.25) * band(nm, 1395.0, 12.0, 0.10) *
         band(nm, 1415.0, 14.0, 0.12) * band(nm, 1915.0, 30.0, 0.06) * (1.0 - 0.1 * sigmoid(nm, 2400.0, 40.0));
}

struct BaseInfo {
  const char* name;
  std::array<std::uint8_t, 3> colour;
};

constexpr std::array<BaseInfo, kBaseMaterials> kBaseInfo{{
    {"Green vegetation", {34, 139, 34}},
    {"Dry soil", {160, 120, 70}},
    {"Water", {30, 80, 200}},
    {"Limestone (calcite)", {225, 222, 200}},
    {"Asphalt", {70, 70, 75}},
    {"Iron-oxide rock (hematite)", {170, 60, 40}},
    {"Concrete", {185, 185, 185}},
    {"Dry grass", {215, 195, 110}},
    {"Kaolinite clay", {235, 225, 245}},
}};

std::uint8_t shade(std::uint8_t channel, double factor) {
  return static_cast<std::uint8_t>(std::clamp(channel * factor, 0.0, 255.0));
}

constexpr std::uint64_t kVariantAttempts = 64;
constexpr double kMinVariantAngle = 0.03;  // radians

std::vector<double> coarse_spectrum(const Material& m) {
  std::vector<double> spectrum;
  for (double nm = 400.0; nm <= 2400.0; nm += 20.0) spectrum.push_back(reflectance(m, nm));
  return spectrum;
}

double min_angle(const std::vector<double>& a, const std::vector<std::vector<double>>& others) {
  double smallest = 4.0;
  for (const auto& b : others) {
    double ab = 0.0, aa = 0.0, bb = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      ab += a[i] * b[i];
      aa += a[i] * a[i];
      bb += b[i] * b[i];
    }
    smallest = std::min(smallest, std::acos(std::min(1.0, ab / std::sqrt(aa * bb))));
  }
  return smallest;
}

// A base material mixed with another, rescaled and tilted; `bits` seeds the choice.
Material variant(const BaseInfo& info, BaseMaterial base, std::uint64_t bits) {
  Material m{info.name, info.colour, base};
  const int offset = 1 + static_cast<int>(hash(bits, 0) % (kBaseMaterials - 1));
  m.admixture = static_cast<BaseMaterial>((static_cast<int>(base) + offset) % kBaseMaterials);
  m.admixture_fraction = 0.15 + 0.3 * unit_interval(hash(bits, 1));
  m.brightness = 0.8 + 0.35 * unit_interval(hash(bits, 2));
  m.slope = 0.3 * signed_unit(hash(bits, 3));
  const double factor = 0.6 + 0.8 * unit_interval(hash(bits, 4));
  for (auto& channel : m.colour) channel = shade(channel, factor);
  return m;
}

}  // namespace

double base_reflectance(BaseMaterial base, double nm) {
  switch (base) {
    case BaseMaterial::green_vegetation: return green_vegetation(nm);
    case BaseMaterial::dry_soil: return dry_soil(nm);
    case BaseMaterial::water: return water(nm);
    case BaseMaterial::limestone: return limestone(nm);
    case BaseMaterial::asphalt: return asphalt(nm);
    case BaseMaterial::iron_oxide_rock: return iron_oxide_rock(nm);
    case BaseMaterial::concrete: return concrete(nm);
    case BaseMaterial::dry_grass: return dry_grass(nm);
    case BaseMaterial::kaolinite: return kaolinite(nm);
  }
  return 0.0;
}

double reflectance(const Material& m, double nm) {
  const double mixed = (1.0 - m.admixture_fraction) * base_reflectance(m.base, nm) +
                       m.admixture_fraction * base_reflectance(m.admixture, nm);
  const double tilt = 1.0 + m.slope * (nm - 1400.0) / 1100.0;
  return std::clamp(m.brightness * tilt * mixed, 0.0, 1.0);
}

std::vector<Material> choose_materials(int classes, std::uint64_t seed) {
  std::vector<Material> materials;
  std::vector<std::vector<double>> spectra;  // coarse samples, to keep variants apart
  const std::uint64_t key = stream_key(seed, Stream::material_variant);
  for (int c = 0; c < classes; ++c) {
    const int base_index = c % kBaseMaterials;
    const auto& info = kBaseInfo[static_cast<std::size_t>(base_index)];
    Material m{info.name, info.colour, static_cast<BaseMaterial>(base_index)};
    m.admixture = m.base;
    if (c >= kBaseMaterials) {
      // Draw variants until one differs from every earlier material by a clear angle.
      for (std::uint64_t attempt = 0; attempt < kVariantAttempts; ++attempt) {
        m = variant(info, static_cast<BaseMaterial>(base_index), hash(key, static_cast<std::uint64_t>(c), attempt));
        if (min_angle(coarse_spectrum(m), spectra) > kMinVariantAngle) break;
      }
      m.name += " variant " + std::to_string(c / kBaseMaterials + 1);
    }
    spectra.push_back(coarse_spectrum(m));
    materials.push_back(std::move(m));
  }
  return materials;
}

}  // namespace hb::synth
