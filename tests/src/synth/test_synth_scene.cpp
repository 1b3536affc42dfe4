// Pixels of the synthetic scenes: determinism across tilings and seeds, no-data border,
// atmospheric bands, detector striping, and agreement with the material library.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "src/synth/model.hpp"

namespace hb::synth {
namespace {

struct Scene {
  std::vector<std::int16_t> pixels;  // BIP
  std::vector<std::uint8_t> truth;
};

Scene generate(const SceneModel& model, std::int64_t tile_rows, int threads = 1) {
  const auto samples = static_cast<std::size_t>(model.samples());
  const auto bands = static_cast<std::size_t>(model.bands());
  Scene scene{std::vector<std::int16_t>(static_cast<std::size_t>(model.lines()) * samples * bands),
              std::vector<std::uint8_t>(static_cast<std::size_t>(model.lines()) * samples)};
  for (std::int64_t begin = 0; begin < model.lines(); begin += tile_rows) {
    const RowRange rows{begin, std::min(begin + tile_rows, model.lines())};
    const auto first = static_cast<std::size_t>(begin) * samples;
    const auto count = static_cast<std::size_t>(rows.rows()) * samples;
    generate_rows(model, rows, std::span(scene.pixels).subspan(first * bands, count * bands),
                  std::span(scene.truth).subspan(first, count), threads);
  }
  return scene;
}

SynthOptions small(std::uint64_t seed = 1) {
  SynthOptions o;
  o.lines = 41;
  o.samples = 37;
  o.bands = 31;
  o.classes = 5;
  o.seed = seed;
  o.fill_border = 0.2;
  return o;
}

std::size_t band_nearest(const SceneModel& m, double nm) {
  std::size_t best = 0;
  for (std::size_t b = 0; b < m.wavelengths.centre_nm.size(); ++b)
    if (std::abs(m.wavelengths.centre_nm[b] - nm) < std::abs(m.wavelengths.centre_nm[best] - nm)) best = b;
  return best;
}

TEST(SynthScene, BytesDoNotDependOnTheTileSize) {
  const SceneModel model(small());
  const Scene whole = generate(model, model.lines());
  for (std::int64_t tile_rows : {1, 2, 5, 7, 16, 40}) {
    const Scene tiled = generate(model, tile_rows);
    EXPECT_EQ(tiled.pixels, whole.pixels) << "tile rows " << tile_rows;
    EXPECT_EQ(tiled.truth, whole.truth) << "tile rows " << tile_rows;
  }
}

TEST(SynthScene, BytesDoNotDependOnTheThreadCount) {
  SynthOptions o = small();
  o.lines = 300;  // enough pixels for several threads
  o.samples = 150;
  const SceneModel model(o);
  const Scene serial = generate(model, 100, 1);
  for (int threads : {2, 3, 8}) {
    const Scene parallel = generate(model, 100, threads);
    EXPECT_EQ(parallel.pixels, serial.pixels) << threads << " threads";
    EXPECT_EQ(parallel.truth, serial.truth) << threads << " threads";
  }
}

TEST(SynthScene, SameSeedSameBytesDifferentSeedDifferentScene) {
  const Scene a = generate(SceneModel(small(7)), 9);
  const Scene b = generate(SceneModel(small(7)), 13);
  const Scene c = generate(SceneModel(small(8)), 9);
  EXPECT_EQ(a.pixels, b.pixels);
  EXPECT_EQ(a.truth, b.truth);
  std::size_t differing = 0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i) differing += a.pixels[i] != c.pixels[i];
  EXPECT_GT(differing, a.pixels.size() / 2);
  EXPECT_NE(a.truth, c.truth);
}

TEST(SynthScene, FillPixelsAreIgnoreValueInEveryBandAndTruthZero) {
  SynthOptions o = small();
  o.lines = 120;
  o.samples = 100;
  o.fill_border = 0.3;
  const SceneModel model(o);
  const Scene scene = generate(model, 17);
  const auto bands = static_cast<std::size_t>(o.bands);
  std::size_t fill = 0;
  for (std::size_t p = 0; p < scene.truth.size(); ++p) {
    const auto first = scene.pixels.begin() + static_cast<std::ptrdiff_t>(p * bands);
    const auto fill_bands = std::count(first, first + static_cast<std::ptrdiff_t>(bands), kFillValue);
    if (scene.truth[p] == 0) {
      ++fill;
      EXPECT_EQ(fill_bands, static_cast<std::ptrdiff_t>(bands)) << "pixel " << p;
    } else {
      EXPECT_EQ(fill_bands, 0) << "pixel " << p;
      EXPECT_LE(scene.truth[p], o.classes);
    }
  }
  EXPECT_NEAR(static_cast<double>(fill) / static_cast<double>(scene.truth.size()), 0.3, 0.02);
}

// Mean over valid pixels of each band.
std::vector<double> band_means(const SceneModel& m, const Scene& scene) {
  const auto bands = static_cast<std::size_t>(m.bands());
  std::vector<double> sums(bands, 0.0);
  std::size_t valid = 0;
  for (std::size_t p = 0; p < scene.truth.size(); ++p) {
    if (scene.truth[p] == 0) continue;
    ++valid;
    for (std::size_t b = 0; b < bands; ++b) sums[b] += scene.pixels[p * bands + b];
  }
  for (auto& s : sums) s /= static_cast<double>(valid);
  return sums;
}

TEST(SynthScene, WaterVapourBandsCarryLittleSignal) {
  SynthOptions o;
  o.lines = 48;
  o.samples = 48;
  o.bands = 224;
  o.classes = 6;
  const SceneModel model(o);
  const auto means = band_means(model, generate(model, 48));
  auto mean_at = [&](double nm) { return means[band_nearest(model, nm)]; };
  EXPECT_LT(mean_at(1400.0), 0.1 * mean_at(1250.0));
  EXPECT_LT(mean_at(1400.0), 0.1 * mean_at(1650.0));
  EXPECT_LT(mean_at(1880.0), 0.1 * mean_at(1650.0));
  EXPECT_LT(mean_at(1880.0), 0.1 * mean_at(2200.0));
  // Noise dominates there: sigma is at least comparable to the remaining signal.
  EXPECT_GT(model.sigma_dn[band_nearest(model, 1880.0)], 0.25 * mean_at(1880.0));
  EXPECT_GT(model.sigma_dn[band_nearest(model, 370.0)], 2 * model.sigma_dn[band_nearest(model, 800.0)]);
}

double correlation(const std::vector<double>& a, const std::vector<double>& b) {
  double ma = 0, mb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ma += a[i];
    mb += b[i];
  }
  ma /= static_cast<double>(a.size());
  mb /= static_cast<double>(b.size());
  double ab = 0, aa = 0, bb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ab += (a[i] - ma) * (b[i] - mb);
    aa += (a[i] - ma) * (a[i] - ma);
    bb += (b[i] - mb) * (b[i] - mb);
  }
  return ab / std::sqrt(aa * bb);
}

// Column means of one band over a range of lines.
std::vector<double> column_means(const SceneModel& m, const Scene& scene, std::size_t band, std::int64_t l0,
                                 std::int64_t l1) {
  const auto samples = static_cast<std::size_t>(m.samples());
  const auto bands = static_cast<std::size_t>(m.bands());
  std::vector<double> means(samples, 0.0);
  for (std::int64_t l = l0; l < l1; ++l)
    for (std::size_t s = 0; s < samples; ++s)
      means[s] += scene.pixels[(static_cast<std::size_t>(l) * samples + s) * bands + band];
  for (auto& v : means) v /= static_cast<double>(l1 - l0);
  return means;
}

TEST(SynthScene, StripingIsAFixedPerColumnOffsetAlongTrack) {
  SynthOptions o;
  o.lines = 400;
  o.samples = 64;
  o.bands = 60;
  o.classes = 1;  // one flat material: column differences can only come from the detector
  SceneParams flat;
  flat.layout.variability = 0.0;
  const SceneModel striped(o, flat);
  const Scene scene = generate(striped, 50);
  for (double nm : {450.0, 1000.0, 2200.0}) {
    const std::size_t band = band_nearest(striped, nm);
    const auto top = column_means(striped, scene, band, 0, 200);
    const auto bottom = column_means(striped, scene, band, 200, 400);
    EXPECT_GT(correlation(top, bottom), 0.8) << nm << " nm: the same columns are bright in both halves";
  }
  flat.striping = 0.0;
  const SceneModel clean(o, flat);
  const Scene unstriped = generate(clean, 50);
  const std::size_t band = band_nearest(clean, 1000.0);
  EXPECT_LT(std::abs(correlation(column_means(clean, unstriped, band, 0, 200),
                                 column_means(clean, unstriped, band, 200, 400))),
            0.4);
}

TEST(SynthScene, NoiseFreeInteriorPixelsAreExactlyTheLibrarySpectra) {
  SynthOptions o = small();
  o.lines = 80;
  o.samples = 80;
  SceneParams pure;
  pure.noise = 0.0;
  pure.striping = 0.0;
  pure.layout.variability = 0.0;
  const SceneModel model(o, pure);
  const Scene scene = generate(model, 80);
  const auto library = material_library(model);
  const auto bands = static_cast<std::size_t>(o.bands);
  std::size_t checked = 0;
  for (std::int64_t l = 0; l < o.lines; ++l) {
    for (std::int64_t s = 0; s < o.samples; ++s) {
      const PixelCover cover = model.layout.at(l, s);
      if (cover.fill || cover.secondary_weight > 0) continue;
      const std::size_t p = static_cast<std::size_t>(l * o.samples + s);
      for (std::size_t b = 0; b < bands; ++b)
        ASSERT_NEAR(scene.pixels[p * bands + b], library[static_cast<std::size_t>(cover.primary) * bands + b] * 1e4,
                    0.5 + 1e-3);
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000u);
  for (float r : library) {
    EXPECT_GE(r, 0.0f);
    EXPECT_LE(r, 1.0f);
  }
}

TEST(SynthScene, ClassMeansMatchTheLibraryWithinNoiseAndSpectralAngleRecoversClasses) {
  SynthOptions o;
  o.lines = 96;
  o.samples = 96;
  o.bands = 224;
  o.classes = 9;
  const SceneModel model(o);
  const Scene scene = generate(model, 32);
  const auto library = material_library(model);
  const auto bands = static_cast<std::size_t>(o.bands);
  const auto classes = static_cast<std::size_t>(o.classes);
  std::vector<double> sums(classes * bands, 0.0);
  std::vector<std::size_t> counts(classes, 0);
  std::size_t correct = 0, interior = 0;
  for (std::size_t p = 0; p < scene.truth.size(); ++p) {
    const PixelCover cover = model.layout.at(static_cast<std::int64_t>(p) / o.samples, static_cast<std::int64_t>(p) % o.samples);
    if (cover.fill || cover.secondary_weight > 0) continue;
    const auto c = static_cast<std::size_t>(cover.primary);
    ++counts[c];
    for (std::size_t b = 0; b < bands; ++b) sums[c * bands + b] += scene.pixels[p * bands + b];
    // Spectral angle to every library entry over the bands with signal.
    std::size_t best = 0;
    double best_cos = -2.0;
    for (std::size_t k = 0; k < classes; ++k) {
      double xy = 0, xx = 0, yy = 0;
      for (std::size_t b = 0; b < bands; ++b) {
        if (model.transmittance[b] < 0.5) continue;
        const double x = scene.pixels[p * bands + b];
        const double y = library[k * bands + b];
        xy += x * y;
        xx += x * x;
        yy += y * y;
      }
      const double cosine = xy / std::sqrt(xx * yy);
      if (cosine > best_cos) {
        best_cos = cosine;
        best = k;
      }
    }
    correct += best == c;
    ++interior;
  }
  EXPECT_GT(static_cast<double>(correct) / static_cast<double>(interior), 0.99);
  for (std::size_t c = 0; c < classes; ++c) {
    ASSERT_GT(counts[c], 50u) << "class " << c;
    for (std::size_t b = 0; b < bands; ++b) {
      const double mean = sums[c * bands + b] / static_cast<double>(counts[c]);
      const double expected = library[c * bands + b] * 1e4;
      // Brightness varies by a few percent; striping and noise average out.
      EXPECT_NEAR(mean, expected, 0.06 * expected + 4 * model.sigma_dn[b]) << "class " << c << " band " << b;
    }
  }
}

}  // namespace
}  // namespace hb::synth
