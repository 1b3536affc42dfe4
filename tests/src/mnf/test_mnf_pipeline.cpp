// The MNF/PCA orchestration over an in-memory cube: tile-size independence, float32
// transform accuracy, exclusions, singular noise, the statistics file.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "mpi/comm.hpp"
#include "src/mnf/cpu_tile_ops.hpp"
#include "src/mnf/pipeline.hpp"
#include "src/mnf/stats_file.hpp"
#include "tests/src/mnf/test_mnf_support.hpp"

namespace hb::mnf {
namespace {

const mpi::Runtime runtime(nullptr, nullptr);  // MPI for Comm::world() in a plain gtest binary

using testing::MemoryCube;
using testing::MemoryWriter;
using testing::Scene;

struct Outcome {
  SceneStatistics stats;
  Covariances cov;
  Basis basis;
};

Outcome analyse(const io::Cube& cube, const PipelineOptions& options) {
  auto ops = make_cpu_tile_ops();
  auto stats = gather_statistics(cube, *ops, mpi::Comm::world(), options);
  EXPECT_TRUE(stats.ok()) << (stats.ok() ? "" : stats.error().line());
  auto cov = covariances(*stats, options.method);
  EXPECT_TRUE(cov.ok());
  auto basis = build_basis(*cov, stats->rules, options.method);
  EXPECT_TRUE(basis.ok()) << (basis.ok() ? "" : basis.error().line());
  return {*stats, *cov, *basis};
}

PipelineOptions with_tile_rows(std::int64_t rows, Method method = Method::mnf) {
  PipelineOptions o;
  o.method = method;
  o.tile_rows = rows;
  return o;
}

MemoryWriter components(const io::Cube& cube, const Outcome& outcome, std::int64_t m, std::int64_t rows) {
  const auto& shape = cube.info().shape;
  MemoryWriter writer(shape.lines, shape.samples, m);
  auto ops = make_cpu_tile_ops();
  EXPECT_TRUE(write_components(cube, *ops, outcome.stats.rules, reduction_map(outcome.basis, m), writer, rows,
                               mpi::Comm::world()).ok());
  return writer;
}

TEST(PipelineTest, EigenvaluesAndComponentsDoNotDependOnTileSize) {
  const MemoryCube<double> cube(testing::random_scene(23, 17, 9, 21));
  for (Method method : {Method::mnf, Method::pca}) {
    const auto whole = analyse(cube, with_tile_rows(23, method));
    const auto reference = components(cube, whole, 4, 23);
    for (std::int64_t rows : {1, 3, 7}) {
      SCOPED_TRACE(std::string(method_name(method)) + " tile rows " + std::to_string(rows));
      const auto tiled = analyse(cube, with_tile_rows(rows, method));
      ASSERT_EQ(tiled.basis.eigenvalues.size(), whole.basis.eigenvalues.size());
      for (std::size_t j = 0; j < whole.basis.eigenvalues.size(); ++j)
        EXPECT_NEAR(tiled.basis.eigenvalues[j], whole.basis.eigenvalues[j], 1e-12 * whole.basis.eigenvalues[0]);
      const auto out = components(cube, tiled, 4, rows);
      for (std::size_t i = 0; i < out.values.size(); ++i) ASSERT_NEAR(out.values[i], reference.values[i], 1e-4) << i;
    }
  }
}

TEST(PipelineTest, ComponentsAgreeWithAFloat64ProjectionWithinAMillionthOfTheirStd) {
  const Scene scene = testing::random_scene(30, 20, 12, 22, 1e4, 0.5);
  const MemoryCube<double> cube(scene);
  const auto outcome = analyse(cube, with_tile_rows(8));
  const std::int64_t m = outcome.basis.components();
  const auto out = components(cube, outcome, m, 8);
  for (std::int64_t j = 0; j < m; ++j) {
    double worst = 0.0;
    for (std::int64_t r = 0; r < 30; ++r)
      for (std::int64_t c = 0; c < 20; ++c) {
        double z = 0.0;
        for (std::int64_t b = 0; b < 12; ++b)
          z += outcome.basis.forward(b, j) * (scene.at(r, c, b) - outcome.basis.mean[static_cast<std::size_t>(b)]);
        worst = std::max(worst, std::abs(z - out.at(r, c, j)));
      }
    // Variance of component j over the scene is its eigenvalue (MNF: with T^T C T = L).
    const double sd = std::sqrt(outcome.basis.eigenvalues[static_cast<std::size_t>(j)]);
    EXPECT_LE(worst, 1e-6 * sd) << "component " << j;
  }
}

TEST(PipelineTest, ConstantBandIsReportedAndGivesFiniteComponents) {
  Scene scene = testing::random_scene(15, 11, 6, 23);
  for (std::int64_t r = 0; r < 15; ++r)
    for (std::int64_t c = 0; c < 11; ++c) scene.at(r, c, 4) = 250.0;
  const MemoryCube<double> cube(scene);
  const auto outcome = analyse(cube, with_tile_rows(4));
  ASSERT_EQ(outcome.basis.warnings.size(), 1u);
  EXPECT_NE(outcome.basis.warnings[0].find("band(s) 4"), std::string::npos) << outcome.basis.warnings[0];
  EXPECT_EQ(outcome.basis.components(), 5);
  const auto out = components(cube, outcome, 5, 4);
  for (float v : out.values) ASSERT_TRUE(std::isfinite(v));
}

TEST(PipelineTest, IgnoredPixelsAndBadBandsFollowTheRules) {
  Scene scene = testing::random_scene(12, 10, 5, 24);
  for (std::int64_t b = 0; b < 5; ++b) scene.at(3, 3, b) = -50.0;  // fill in every band
  scene.at(7, 2, 0) = -50.0;                                       // fill in one band
  for (std::int64_t r = 0; r < 12; ++r) scene.at(r, 5, 1) = NAN;   // NaN only in the bad band
  io::Metadata meta;
  meta.data_ignore_value = -50.0;
  meta.bbl = {1, 0, 1, 1, 1};
  const MemoryCube<double> cube(scene, meta);
  const auto outcome = analyse(cube, with_tile_rows(5));
  EXPECT_EQ(outcome.stats.rules.bands, (std::vector<std::int64_t>{0, 2, 3, 4}));
  EXPECT_EQ(outcome.stats.excluded_bands, (std::vector<std::int64_t>{1}));
  EXPECT_EQ(outcome.stats.excluded_pixels(), 2);
  EXPECT_EQ(outcome.basis.forward.rows, 4);
  const auto out = components(cube, outcome, 2, 5);
  EXPECT_TRUE(std::isnan(out.at(3, 3, 0)) && std::isnan(out.at(7, 2, 1)));
  EXPECT_TRUE(std::isfinite(out.at(3, 4, 0)) && std::isfinite(out.at(4, 5, 1)));

  MemoryWriter denoised(12, 10, 5);
  auto ops = make_cpu_tile_ops();
  ASSERT_TRUE(write_denoised(cube, *ops, outcome.stats.rules, denoise_map(outcome.basis, 4), denoised, 5,
                             mpi::Comm::world()).ok());
  EXPECT_EQ(denoised.at(3, 3, 2), -50.0f) << "excluded pixels pass through";
  EXPECT_TRUE(std::isnan(denoised.at(0, 5, 1))) << "bad bands pass through";
  for (std::int64_t b : {0, 2, 3, 4})  // all used components kept: the identity map
    EXPECT_NEAR(denoised.at(6, 6, b), scene.at(6, 6, b), 1e-3);
}

TEST(StatsFileTest, RoundTripsAndRebuildsTheSameBasis) {
  const MemoryCube<double> cube(testing::random_scene(14, 9, 5, 25));
  const auto outcome = analyse(cube, with_tile_rows(6));
  StatsRecord record;
  record.scene_bands = 5;
  record.bands = outcome.stats.rules.bands;
  record.excluded_bands = {};
  record.mean = outcome.cov.data.mean;
  record.data_covariance = outcome.cov.data.covariance;
  record.noise_covariance = outcome.cov.noise.covariance;
  record.eigenvalues = outcome.basis.eigenvalues;
  record.transform = linalg::first_columns(outcome.basis.forward, 3);
  record.data_pixels = outcome.stats.data.count;
  record.noise_pixels = outcome.stats.noise.count;
  record.backend = "cpu";
  record.source_file = "memory";
  const auto path = (std::filesystem::temp_directory_path() / ("mnf_stats_" + std::to_string(::getpid()) + ".h5")).string();
  ASSERT_TRUE(write_stats_file(path, record).ok());
  auto back = read_stats_file(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(back.ok()) << back.error().line();
  EXPECT_EQ(back->method, Method::mnf);
  EXPECT_EQ(back->estimator, kDiff);
  EXPECT_EQ(back->bands, record.bands);
  EXPECT_EQ(back->mean, record.mean);
  EXPECT_EQ(back->data_covariance.data, record.data_covariance.data);
  EXPECT_EQ(back->noise_covariance.data, record.noise_covariance.data);
  EXPECT_EQ(back->transform.rows, 5);
  EXPECT_EQ(back->transform.cols, 3);
  EXPECT_EQ(back->transform.data, record.transform.data);
  EXPECT_EQ(back->eigenvalues, record.eigenvalues);
  EXPECT_EQ(back->data_pixels, record.data_pixels);
  EXPECT_EQ(back->source_file, "memory");
  auto rebuilt = mnf_basis({back->data_pixels, back->mean, back->data_covariance}, back->noise_covariance, back->bands);
  ASSERT_TRUE(rebuilt.ok());
  EXPECT_EQ(rebuilt->forward.data, outcome.basis.forward.data) << "--apply rebuilds the identical basis";
  EXPECT_FALSE(read_stats_file(path + ".missing").ok());
}

TEST(PipelineTest, TileRowsFollowTheMemoryBudget) {
  io::CubeInfo info;
  info.shape = {1000, 100, 10};
  info.type = DataType::i16;
  PipelineOptions options;
  options.tile_budget_bytes = 100 * (20 + 10 * 12 + 4 * 12) * 7;
  EXPECT_EQ(tile_rows_for(info, options, 4), 7);
  options.tile_rows = 3;
  EXPECT_EQ(tile_rows_for(info, options, 4), 3);
  options.tile_rows = 5000;
  EXPECT_EQ(tile_rows_for(info, options, 4), 1000);
}

}  // namespace
}  // namespace hb::mnf
