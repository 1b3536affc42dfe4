// Moments and noise statistics over tiles vs float64 two-pass references.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "src/mnf/cpu_tile_ops.hpp"
#include "tests/src/mnf/test_mnf_support.hpp"

namespace hb::mnf {
namespace {

using testing::Scene;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class T = double>
MeanCovariance data_stats(const Scene& scene, const PixelRules& rules, std::int64_t tile_rows) {
  auto ops = make_cpu_tile_ops();
  std::vector<double> shift;
  for (auto b : rules.bands) shift.push_back(scene.at(0, 0, b));  // provisional mean: the first pixel
  Moments moments = Moments::zero(shift);
  for (std::int64_t r0 = 0; r0 < scene.lines; r0 += tile_rows) {
    const auto tile = testing::make_tile<T>(scene, {r0, std::min(scene.lines, r0 + tile_rows)});
    EXPECT_TRUE(ops->accumulate_moments(tile, rules, moments).ok());
  }
  auto result = covariance(moments);
  EXPECT_TRUE(result.ok());
  return *result;
}

MeanCovariance noise_stats(const Scene& scene, const PixelRules& rules, NoiseEstimator estimator,
                           std::int64_t tile_rows, Window window = {}) {
  auto ops = make_cpu_tile_ops();
  Moments moments = Moments::zero(std::vector<double>(rules.bands.size(), 0.0));
  const auto halo = noise_halo(estimator);
  const NoiseConfig config{estimator, window, scene.lines};
  for (std::int64_t r0 = 0; r0 < scene.lines; r0 += tile_rows) {
    const auto tile =
        testing::make_tile<double>(scene, {r0, std::min(scene.lines, r0 + tile_rows)}, halo.above, halo.below);
    EXPECT_TRUE(ops->accumulate_noise_moments(tile, rules, config, moments).ok());
  }
  auto result = covariance(moments, noise_covariance_scale(estimator));
  EXPECT_TRUE(result.ok());
  return *result;
}

std::vector<std::vector<double>> all_pixels(const Scene& scene) {
  std::vector<std::vector<double>> out;
  for (std::int64_t r = 0; r < scene.lines; ++r)
    for (std::int64_t c = 0; c < scene.samples; ++c) out.push_back(scene.pixel(r, c));
  return out;
}

void expect_close(const MeanCovariance& got, const MeanCovariance& want, double tolerance) {
  EXPECT_EQ(got.count, want.count);
  for (std::size_t i = 0; i < want.mean.size(); ++i)
    EXPECT_NEAR(got.mean[i], want.mean[i], tolerance * std::max(1.0, std::abs(want.mean[i])));
  EXPECT_LE(testing::relative_difference(got.covariance, want.covariance), tolerance);
}

TEST(MomentsTest, MatchTwoPassReferenceDespiteLargeOffsetForAnyTileSize) {
  const Scene scene = testing::random_scene(11, 13, 6, 1, 1e4, 0.01);
  const auto reference = testing::reference_stats(all_pixels(scene));
  for (std::int64_t rows : {1, 3, 7, 11}) {
    SCOPED_TRACE(rows);
    expect_close(data_stats(scene, testing::all_bands(6), rows), reference, 1e-12);
  }
}

TEST(MomentsTest, MergedPartsEqualTheWhole) {
  const Scene scene = testing::random_scene(9, 5, 4, 2);
  auto ops = make_cpu_tile_ops();
  const auto rules = testing::all_bands(4);
  const auto shift = scene.pixel(0, 0);
  Moments whole = Moments::zero(shift), top = Moments::zero(shift), bottom = Moments::zero(shift);
  ASSERT_TRUE(ops->accumulate_moments(testing::make_tile<double>(scene, {0, 9}), rules, whole).ok());
  ASSERT_TRUE(ops->accumulate_moments(testing::make_tile<double>(scene, {0, 4}), rules, top).ok());
  ASSERT_TRUE(ops->accumulate_moments(testing::make_tile<double>(scene, {4, 9}), rules, bottom).ok());
  ASSERT_TRUE(merge(top, bottom).ok());
  EXPECT_EQ(top.count, whole.count);
  for (std::size_t i = 0; i < whole.cross.size(); ++i) EXPECT_NEAR(top.cross[i], whole.cross[i], 1e-9);
  for (std::size_t i = 0; i < whole.sum.size(); ++i) EXPECT_NEAR(top.sum[i], whole.sum[i], 1e-9);
  Moments other = Moments::zero(std::vector<double>(4, 0.0));
  EXPECT_FALSE(merge(top, other).ok()) << "moments about different shifts must not be merged";
}

TEST(MomentsTest, IntegerTilesGiveTheSameStatisticsAsTheirValues) {
  Scene scene = testing::random_scene(8, 9, 5, 3, 1000.0, 30.0);
  for (auto& v : scene.values) v = std::round(v);
  expect_close(data_stats<std::int16_t>(scene, testing::all_bands(5), 3),
               testing::reference_stats(all_pixels(scene)), 1e-12);
}

TEST(MomentsTest, ExcludePixelsWithTheIgnoreValueInAnyBandOrNonFiniteValues) {
  Scene scene = testing::random_scene(7, 6, 3, 4);
  scene.at(0, 0, 0) = kNaN;  // also the first pixel, which then cannot be the shift
  scene.at(2, 3, 1) = -9999.0;
  for (std::int64_t b = 0; b < 3; ++b) scene.at(5, 5, b) = -9999.0;
  scene.at(4, 1, 2) = std::numeric_limits<double>::infinity();
  std::vector<std::vector<double>> valid;
  for (std::int64_t r = 0; r < 7; ++r)
    for (std::int64_t c = 0; c < 6; ++c)
      if (!((r == 0 && c == 0) || (r == 2 && c == 3) || (r == 5 && c == 5) || (r == 4 && c == 1)))
        valid.push_back(scene.pixel(r, c));
  PixelRules rules = testing::all_bands(3);
  rules.ignore_value = -9999.0;
  auto ops = make_cpu_tile_ops();
  Moments moments = Moments::zero(scene.pixel(1, 1));
  for (std::int64_t r0 = 0; r0 < 7; r0 += 2)
    ASSERT_TRUE(ops->accumulate_moments(testing::make_tile<double>(scene, {r0, std::min<std::int64_t>(7, r0 + 2)}),
                                            rules, moments).ok());
  auto got = covariance(moments);
  ASSERT_TRUE(got.ok());
  expect_close(*got, testing::reference_stats(valid), 1e-12);
}

TEST(MomentsTest, BadBandsAreLeftOutAndNotInspected) {
  Scene scene = testing::random_scene(6, 6, 5, 5);
  for (std::int64_t r = 0; r < 6; ++r) scene.at(r, 2, 3) = kNaN;  // NaN only in the bad band
  io::CubeInfo info;
  info.shape = {6, 6, 5};
  info.meta.bbl = {1, 0, 1, 0, 1};
  const auto rules = pixel_rules(info);
  EXPECT_EQ(rules.bands, (std::vector<std::int64_t>{0, 2, 4}));
  EXPECT_EQ(excluded_bands(info), (std::vector<std::int64_t>{1, 3}));
  std::vector<std::vector<double>> good;
  for (const auto& p : all_pixels(scene)) good.push_back({p[0], p[2], p[4]});
  expect_close(data_stats(scene, rules, 4), testing::reference_stats(good), 1e-12);
}

// Direct float64 residuals over the whole scene, the definitions in stats.hpp.
std::vector<std::vector<double>> direct_residuals(const Scene& s, NoiseEstimator estimator, const Window& window = {}) {
  std::vector<std::vector<double>> out;
  auto ok = [&](std::int64_t r, std::int64_t c) {
    if (!window.contains(r, c)) return false;
    for (std::int64_t b = 0; b < s.bands; ++b)
      if (!std::isfinite(s.at(r, c, b))) return false;
    return true;
  };
  for (std::int64_t r = 0; r < s.lines; ++r)
    for (std::int64_t c = 0; c < s.samples; ++c) {
      std::vector<double> v(static_cast<std::size_t>(s.bands));
      if (estimator == kDiff) {
        if (r + 1 >= s.lines || c + 1 >= s.samples || !ok(r, c) || !ok(r + 1, c + 1)) continue;
        for (std::int64_t b = 0; b < s.bands; ++b) v[static_cast<std::size_t>(b)] = s.at(r, c, b) - s.at(r + 1, c + 1, b);
      } else {
        if (r < 1 || c < 1 || r + 1 >= s.lines || c + 1 >= s.samples) continue;
        bool all = true;
        for (int dr = -1; dr <= 1; ++dr)
          for (int dc = -1; dc <= 1; ++dc) all = all && ok(r + dr, c + dc);
        if (!all) continue;
        for (std::int64_t b = 0; b < s.bands; ++b) {
          std::vector<double> w;
          for (int dr = -1; dr <= 1; ++dr)
            for (int dc = -1; dc <= 1; ++dc) w.push_back(s.at(r + dr, c + dc, b));
          double reference = 0.0;
          if (estimator == kMedian3x3) {
            std::sort(w.begin(), w.end());
            reference = w[4];
          } else {
            reference = (std::accumulate(w.begin(), w.end(), 0.0) - w[4]) / 8.0;
          }
          v[static_cast<std::size_t>(b)] = s.at(r, c, b) - reference;
        }
      }
      out.push_back(v);
    }
  return out;
}

TEST(NoiseStatsTest, EachEstimatorMatchesItsDirectDefinitionForAnyTileSize) {
  Scene scene = testing::random_scene(12, 10, 4, 6, 500.0, 2.0);
  scene.at(5, 4, 2) = kNaN;  // residuals touching this pixel are excluded
  for (auto estimator : {kDiff, kMean3x3, kMedian3x3}) {
    const auto reference =
        testing::reference_stats(direct_residuals(scene, estimator), noise_covariance_scale(estimator));
    for (std::int64_t rows : {1, 2, 5, 12}) {
      SCOPED_TRACE(std::string(noise_estimator_name(estimator)) + " tile rows " + std::to_string(rows));
      expect_close(noise_stats(scene, testing::all_bands(4), estimator, rows), reference, 1e-12);
    }
  }
}

TEST(NoiseStatsTest, WindowRestrictsResidualsToPixelsInsideIt) {
  const Scene scene = testing::random_scene(15, 14, 3, 7);
  auto window = parse_window("3:11,2:");
  ASSERT_TRUE(window.ok());
  EXPECT_EQ(*window->row_begin, 3);
  EXPECT_EQ(*window->row_end, 11);
  EXPECT_EQ(*window->col_begin, 2);
  EXPECT_FALSE(window->col_end.has_value());
  for (auto estimator : {kDiff, kMedian3x3}) {
    const auto reference =
        testing::reference_stats(direct_residuals(scene, estimator, *window), noise_covariance_scale(estimator));
    expect_close(noise_stats(scene, testing::all_bands(3), estimator, 4, *window), reference, 1e-12);
  }
  EXPECT_FALSE(parse_window("3:11").ok());
  EXPECT_FALSE(parse_window("5:2,0:4").ok());
  EXPECT_FALSE(parse_window("a:b,0:4").ok());
}

TEST(NoiseStatsTest, TileWithoutTheNeededHaloIsRefused) {
  const Scene scene = testing::random_scene(6, 5, 2, 8);
  auto ops = make_cpu_tile_ops();
  Moments moments = Moments::zero({0.0, 0.0});
  const NoiseConfig config{kDiff, {}, 6};
  EXPECT_FALSE(ops->accumulate_noise_moments(testing::make_tile<double>(scene, {0, 3}), testing::all_bands(2),
                                                 config, moments).ok());
}

TEST(NoiseStatsTest, DiffEstimatorRecoversAKnownNoiseCovariance) {
  // Smooth signal + correlated Gaussian noise Σ = L Lᵀ; the diff estimator should give Σ.
  const std::int64_t lines = 200, samples = 200, bands = 3;
  const double l[3][3] = {{2.0, 0.0, 0.0}, {1.0, 1.5, 0.0}, {-0.5, 0.8, 1.0}};
  Scene scene(lines, samples, bands);
  std::mt19937_64 rng(9);
  std::normal_distribution<double> normal;
  for (std::int64_t r = 0; r < lines; ++r)
    for (std::int64_t c = 0; c < samples; ++c) {
      const double e[3] = {normal(rng), normal(rng), normal(rng)};
      for (std::int64_t b = 0; b < bands; ++b) {
        double noise = 0.0;
        for (int k = 0; k < 3; ++k) noise += l[b][k] * e[k];
        const double signal = 100.0 * static_cast<double>(b + 1) +
                              20.0 * std::sin(2.0 * M_PI * static_cast<double>(r + 2 * c) / 900.0);
        scene.at(r, c, b) = signal + noise;
      }
    }
  const auto got = noise_stats(scene, testing::all_bands(bands), kDiff, 37);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double sigma = 0.0;
      for (int k = 0; k < 3; ++k) sigma += l[i][k] * l[j][k];
      EXPECT_NEAR(got.covariance(i, j), sigma, 0.05 * 4.0) << i << "," << j;  // ~3 sd of the estimate
    }
}

}  // namespace
}  // namespace hb::mnf
