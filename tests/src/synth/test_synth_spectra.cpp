// Wavelengths, atmosphere, material spectra and the random-number primitives of the
// synthetic scene generator, checked against physics and against libm / statistics.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <set>

#include "src/synth/atmosphere.hpp"
#include "src/synth/materials.hpp"
#include "src/synth/noise.hpp"
#include "src/synth/wavelengths.hpp"

namespace hb::synth {
namespace {

TEST(SynthWavelengths, ClassicLayoutSpansAvirisRangeAtTenNanometres) {
  const BandSet set = aviris_classic_bands(224);
  ASSERT_EQ(set.size(), 224);
  EXPECT_LT(set.centre_nm.front(), 370.0);
  EXPECT_GT(set.centre_nm.back(), 2490.0);
  for (std::size_t b = 0; b < 224; ++b) {
    EXPECT_GE(set.centre_nm[b], 360.0);
    EXPECT_LE(set.centre_nm[b], 2510.0);
    EXPECT_GE(set.fwhm_nm[b], 8.0);
    EXPECT_LE(set.fwhm_nm[b], 13.0);
    if (b > 0) {
      const double spacing = set.centre_nm[b] - set.centre_nm[b - 1];
      EXPECT_GT(spacing, 6.0) << "band " << b;
      EXPECT_LT(spacing, 12.0) << "band " << b;
    }
  }
}

TEST(SynthWavelengths, OtherBandCountsCoverTheSameRange) {
  for (std::int64_t bands : {2, 50, 100, 400}) {
    const BandSet set = aviris_classic_bands(bands);
    ASSERT_EQ(set.size(), bands);
    EXPECT_NEAR(set.centre_nm.front(), 365.9, 1e-9);
    EXPECT_NEAR(set.centre_nm.back(), 2496.0, 1e-9);
    for (std::size_t b = 1; b < set.centre_nm.size(); ++b) {
      const double spacing = set.centre_nm[b] - set.centre_nm[b - 1];
      EXPECT_GT(spacing, 0.0);
      EXPECT_GE(set.fwhm_nm[b], std::min(spacing, 1e9) - 1e-9) << "bands are as wide as their spacing";
    }
  }
  const BandSet one = aviris_classic_bands(1);
  ASSERT_EQ(one.size(), 1);
  EXPECT_GT(one.centre_nm[0], 365.0);
  EXPECT_LT(one.centre_nm[0], 2500.0);
}

TEST(SynthWavelengths, BandAverageOfLinearFunctionIsItsCentreValue) {
  EXPECT_NEAR(band_average([](double nm) { return 3.0 * nm + 1.0; }, 1000.0, 10.0), 3001.0, 1e-9);
}

TEST(SynthAtmosphere, WaterVapourBandsAreOpaqueAndWindowsClear) {
  for (double nm : {1360.0, 1400.0, 1440.0, 1820.0, 1880.0, 1940.0}) EXPECT_LT(atmospheric_transmittance(nm), 0.05) << nm;
  for (double nm : {550.0, 870.0, 1050.0, 1250.0, 1650.0, 2200.0}) EXPECT_GT(atmospheric_transmittance(nm), 0.9) << nm;
  EXPECT_LT(atmospheric_transmittance(940.0), 0.9);  // the moderate 940 nm band, mostly corrected
  EXPECT_GT(atmospheric_transmittance(940.0), 0.5);
  EXPECT_LT(atmospheric_transmittance(2490.0), 0.3);  // the 2.5 um edge
}

double veg(double nm) { return base_reflectance(BaseMaterial::green_vegetation, nm); }

// Depth of an absorption relative to the straight continuum between two shoulders.
double band_depth(BaseMaterial m, double left, double centre, double right) {
  const double t = (centre - left) / (right - left);
  const double continuum = (1 - t) * base_reflectance(m, left) + t * base_reflectance(m, right);
  return 1.0 - base_reflectance(m, centre) / continuum;
}

TEST(SynthMaterials, VegetationHasGreenPeakRedEdgeAndLeafWater) {
  EXPECT_GT(veg(550.0), veg(470.0));
  EXPECT_GT(veg(550.0), veg(670.0));
  EXPECT_GT(veg(860.0) / veg(670.0), 3.0);  // the red edge
  EXPECT_GT(veg(750.0) - veg(700.0), 0.15);  // steepest between 700 and 750 nm
  EXPECT_GT(band_depth(BaseMaterial::green_vegetation, 1300.0, 1450.0, 1650.0), 0.3);
  EXPECT_GT(band_depth(BaseMaterial::green_vegetation, 1750.0, 1940.0, 2200.0), 0.4);
  EXPECT_GT(band_depth(BaseMaterial::green_vegetation, 880.0, 975.0, 1070.0), 0.01);
  EXPECT_GT(band_depth(BaseMaterial::green_vegetation, 1080.0, 1180.0, 1270.0), 0.02);
}

TEST(SynthMaterials, DiagnosticMineralAndSoilFeatures) {
  EXPECT_GT(band_depth(BaseMaterial::dry_soil, 2120.0, 2205.0, 2280.0), 0.05);      // clay Al-OH
  EXPECT_GT(band_depth(BaseMaterial::limestone, 2250.0, 2340.0, 2430.0), 0.15);     // carbonate
  EXPECT_GT(band_depth(BaseMaterial::iron_oxide_rock, 720.0, 880.0, 1100.0), 0.1);  // ferric iron
  EXPECT_GT(band_depth(BaseMaterial::kaolinite, 2120.0, 2205.0, 2280.0), 0.1);
  for (double nm = 450.0; nm < 1300.0; nm += 50.0)
    EXPECT_GT(base_reflectance(BaseMaterial::dry_soil, nm + 50.0), base_reflectance(BaseMaterial::dry_soil, nm))
        << "soil rises smoothly at " << nm;
  EXPECT_LT(base_reflectance(BaseMaterial::water, 1000.0), 0.01);
  EXPECT_GT(base_reflectance(BaseMaterial::water, 500.0), 3 * base_reflectance(BaseMaterial::water, 800.0));
  const double asphalt_min = base_reflectance(BaseMaterial::asphalt, 400.0);
  const double asphalt_max = base_reflectance(BaseMaterial::asphalt, 2200.0);
  EXPECT_LT(asphalt_max - asphalt_min, 0.1);  // flat-ish and dark
}

TEST(SynthMaterials, EverySpectrumIsSmoothAndWithinZeroToOne) {
  for (const Material& m : choose_materials(30, 7)) {
    double previous = reflectance(m, 350.0);
    for (double nm = 351.0; nm <= 2510.0; nm += 1.0) {
      const double r = reflectance(m, nm);
      ASSERT_GE(r, 0.0) << m.name;
      ASSERT_LE(r, 1.0) << m.name;
      EXPECT_LT(std::abs(r - previous), 0.02) << m.name << " jumps at " << nm;
      previous = r;
    }
  }
}

double spectral_angle(const Material& a, const Material& b) {
  double ab = 0, aa = 0, bb = 0;
  for (double nm = 400.0; nm <= 2400.0; nm += 10.0) {
    const double x = reflectance(a, nm);
    const double y = reflectance(b, nm);
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return std::acos(std::min(1.0, ab / std::sqrt(aa * bb)));
}

TEST(SynthMaterials, ClassesBeyondTheBaseSetAreDistinctVariants) {
  const auto materials = choose_materials(40, 3);
  ASSERT_EQ(materials.size(), 40u);
  std::set<std::string> names;
  for (const auto& m : materials) {
    EXPECT_EQ(m.name.find(','), std::string::npos);
    names.insert(m.name);
  }
  EXPECT_EQ(names.size(), 40u);
  for (std::size_t i = 0; i < materials.size(); ++i)
    for (std::size_t j = i + 1; j < materials.size(); ++j)
      EXPECT_GT(spectral_angle(materials[i], materials[j]), 0.01) << materials[i].name << " vs " << materials[j].name;
  EXPECT_EQ(choose_materials(6, 1)[0].name, "Green vegetation");
  EXPECT_NE(choose_materials(12, 1)[10].slope, choose_materials(12, 2)[10].slope) << "variants follow the seed";
}

TEST(SynthNoise, FastLogAndSinCosMatchLibm) {
  for (float x = 1e-7f; x <= 1.0f; x *= 1.01f) EXPECT_NEAR(log_unit(x), std::log(static_cast<double>(x)), 2e-6) << x;
  EXPECT_EQ(log_unit(1.0f), 0.0f);
  for (float t = -0.5f; t < 0.5f; t += 0.001f) {
    const SinCos sc = sincos_turns(t);
    EXPECT_NEAR(sc.sin, std::sin(2 * std::numbers::pi * t), 2e-6) << t;
    EXPECT_NEAR(sc.cos, std::cos(2 * std::numbers::pi * t), 2e-6) << t;
  }
}

TEST(SynthNoise, NormalPairsAreStandardNormalAndUncorrelated) {
  const std::uint64_t key = stream_key(5, Stream::pixel_noise);
  constexpr int kDraws = 500000;
  double sum = 0, sum2 = 0, cross = 0;
  int within1 = 0, within2 = 0;
  for (int i = 0; i < kDraws; ++i) {
    const NormalPair n = normal_pair(sequence(key, static_cast<std::uint64_t>(i)));
    for (float z : {n.first, n.second}) {
      sum += z;
      sum2 += double(z) * z;
      within1 += std::abs(z) < 1.0f;
      within2 += std::abs(z) < 2.0f;
    }
    cross += double(n.first) * n.second;
  }
  const double count = 2.0 * kDraws;
  EXPECT_NEAR(sum / count, 0.0, 0.005);
  EXPECT_NEAR(sum2 / count, 1.0, 0.01);
  EXPECT_NEAR(within1 / count, 0.682689, 0.003);
  EXPECT_NEAR(within2 / count, 0.954500, 0.002);
  EXPECT_NEAR(cross / kDraws, 0.0, 0.01);
}

TEST(SynthNoise, HashesDependOnEveryInput) {
  EXPECT_NE(hash(1, 2, 3), hash(1, 3, 2));
  EXPECT_NE(stream_key(1, Stream::pixel_noise), stream_key(2, Stream::pixel_noise));
  EXPECT_NE(stream_key(1, Stream::pixel_noise), stream_key(1, Stream::stripe_gain));
  EXPECT_EQ(hash(9, 8, 7), hash(9, 8, 7));
}

TEST(SynthNoise, ValueNoiseIsSmoothAndBounded) {
  const std::uint64_t key = stream_key(1, Stream::brightness);
  double previous = value_noise(key, 10.0, -50.0, 16.0);
  for (double x = -50.0; x < 50.0; x += 0.5) {
    const double v = value_noise(key, 10.0, x, 16.0);
    EXPECT_LE(std::abs(v), 1.0);
    EXPECT_LT(std::abs(v - previous), 0.2);
    previous = v;
  }
}

}  // namespace
}  // namespace hb::synth
