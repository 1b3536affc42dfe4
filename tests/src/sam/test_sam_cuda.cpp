// SAM / SCM on the GPU equals the CPU: the real Jasper Ridge scene (int16, 198 bands)
// against libraries of 4 (constant memory), 100 and 1000 spectra (global memory) for
// both formulations, direct and DGEMM: every score within 1e-6, best matches identical
// (a different winner only where the two scores tie to 1e-12). Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "mpi/comm.hpp"
#include "src/backend/backend.hpp"
#include "src/sam/run.hpp"
#include "tests/src/sam/sam_test_support.hpp"
#include "tests/support/scratch_dir.hpp"

namespace hb::sam {
namespace {

#define HB_REQUIRE_GPU() \
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device"

struct Case {
  Formulation formulation;
  Method method;
  std::int64_t count;
  std::string formulation_name;  // what the scorer must report
};

class SamCudaEqualsCpu : public ::testing::TestWithParam<Case> {};

TEST_P(SamCudaEqualsCpu, ScoresAndBestMatches) {
  HB_REQUIRE_GPU();
  HB_REQUIRE_JASPER();
  const Case c = GetParam();
  auto tile = test::jasper_tile();
  // Ignored pixels: pixel 3 carries the ignore value in one band, pixel 5 is all zero.
  auto raw = tile.as<std::int16_t>();
  raw[3 * 198 + 100] = -1;
  for (int b = 0; b < 198; ++b) raw[static_cast<std::size_t>(5 * 198 + b)] = 0;
  const auto endmembers = test::jasper_endmembers();
  const auto spectra = test::mixed_library(endmembers, c.count, 11);
  const auto bands = test::all_bands(198, -1.0);
  auto cpu = make_cpu_sam_scorer();
  auto gpu = make_sam_scorer(BackendKind::cuda, c.formulation);
  ASSERT_TRUE(gpu.ok()) << gpu.error().line();
  const auto want = test::score_with(*cpu, c.method, spectra, 198, tile, bands);
  const auto got = test::score_with(**gpu, c.method, spectra, 198, tile, bands);
  EXPECT_EQ((*gpu)->formulation(), c.formulation_name);
  ASSERT_EQ(got.best.size(), want.best.size());
  ASSERT_EQ(got.scores.size(), want.scores.size());
  EXPECT_EQ(got.best[3], -1);
  EXPECT_EQ(got.best[5], -1);
  std::int64_t differ = 0;
  for (std::size_t p = 0; p < want.best.size(); ++p) {
    if (want.best[p] < 0) {
      EXPECT_EQ(got.best[p], -1);
      EXPECT_TRUE(std::isnan(got.best_score[p]));
      continue;
    }
    EXPECT_NEAR(got.best_score[p], want.best_score[p], 1e-6) << p;
    if (got.best[p] != want.best[p]) {
      ++differ;
      const auto n = static_cast<std::size_t>(c.count);
      EXPECT_NEAR(want.scores[p * n + static_cast<std::size_t>(got.best[p])],
                  want.scores[p * n + static_cast<std::size_t>(want.best[p])], 1e-6);
    }
  }
  EXPECT_EQ(differ, 0);
  for (std::size_t i = 0; i < want.scores.size(); ++i) {
    if (std::isnan(want.scores[i])) {
      EXPECT_TRUE(std::isnan(got.scores[i]));
      continue;
    }
    ASSERT_NEAR(got.scores[i], want.scores[i], 1e-6) << i;
  }
  // Without the per-class scores the best matches are the same.
  TileScores lean;
  ASSERT_TRUE((*gpu)->score(tile, bands, false, lean).ok());
  EXPECT_EQ(lean.best, got.best);
  EXPECT_TRUE(lean.scores.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Formulations, SamCudaEqualsCpu,
    ::testing::Values(Case{Formulation::direct, Method::sam, 4, "direct, constant memory"},
                      Case{Formulation::direct, Method::scm, 4, "direct, constant memory"},
                      Case{Formulation::direct, Method::sam, 100, "direct, global memory"},
                      Case{Formulation::direct, Method::scm, 1000, "direct, global memory"},
                      Case{Formulation::gemm, Method::sam, 4, "dgemm"},
                      Case{Formulation::gemm, Method::sam, 1000, "dgemm"},
                      Case{Formulation::gemm, Method::scm, 100, "dgemm"},
                      Case{Formulation::automatic, Method::sam, 4, "direct, constant memory"},
                      Case{Formulation::automatic, Method::sam, 10, "dgemm"}),
    [](const auto& param_info) {
      return std::string(formulation_name(param_info.param.formulation)) + "_" +
             std::string(method_name(param_info.param.method)) + "_" + std::to_string(param_info.param.count);
    });

TEST(SamCuda, FloatScenesWithNanPixelsAreIgnored) {
  HB_REQUIRE_GPU();
  io::Tile tile(DataType::f32, 64, 7, {0, 3}, {1, 2});  // the core row only
  auto v = tile.as<float>();
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1.0f + static_cast<float>((i * 37) % 11);
  v[static_cast<std::size_t>(tile.offset(1, 9) + 2)] = std::nanf("");
  const std::vector<double> refs{1, 2, 3, 4, 5, 6, 7, 7, 6, 5, 4, 3, 2, 1, 3, 3, 1, 1, 2, 2, 9};
  for (const auto formulation : {Formulation::direct, Formulation::gemm}) {
    auto gpu = make_sam_scorer(BackendKind::cuda, formulation);
    ASSERT_TRUE(gpu.ok());
    auto cpu = make_cpu_sam_scorer();
    const auto got = test::score_with(**gpu, Method::sam, refs, 7, tile, test::all_bands(7));
    const auto want = test::score_with(*cpu, Method::sam, refs, 7, tile, test::all_bands(7));
    ASSERT_EQ(got.best.size(), 64u);
    EXPECT_EQ(got.best, want.best);
    EXPECT_EQ(got.best[9], -1);
    for (std::size_t p = 0; p < 64; ++p)
      if (p != 9) {
        EXPECT_NEAR(got.best_score[p], want.best_score[p], 1e-6);
      }
  }
}


std::vector<char> bytes_of_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The whole run on the GPU, with and without dedup, against the CPU: the same class map.
TEST(SamCudaRun, DedupOnTheGpuGivesTheCpuClassMap) {
  HB_REQUIRE_GPU();
  HB_REQUIRE_JASPER();
  static const mpi::Runtime runtime(nullptr, nullptr);
  const hb::test::ScratchDir dir("hb_sam_cuda_dedup");
  std::vector<std::vector<char>> maps;
  for (const auto& [backend, mode] : {std::pair{BackendKind::cpu, dedup::Mode::off},
                                      std::pair{BackendKind::cuda, dedup::Mode::off},
                                      std::pair{BackendKind::cuda, dedup::Mode::on}}) {
    SamJob job;
    job.scene = test::jasper("jasper_ridge.hdr");
    job.library = test::jasper("jasper_ridge_endmembers_gt.hdr");
    job.output = dir.file("map" + std::to_string(maps.size()) + ".hdr");
    job.backend = backend;
    job.dedup = mode;
    job.tile_rows = 9;
    auto result = run(job);
    ASSERT_TRUE(result.ok()) << result.error().line();
    EXPECT_EQ(result->classified, 10000);
    maps.push_back(bytes_of_file(dir.file("map" + std::to_string(maps.size()) + ".img")));
  }
  EXPECT_EQ(maps[0], maps[1]);
  EXPECT_EQ(maps[0], maps[2]);
}

}  // namespace
}  // namespace hb::sam
