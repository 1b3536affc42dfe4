// MNF and PCA against Spectral Python (calc_stats, noise_from_diffs, mnf,
// principal_components), run by tests/src/mnf/mnf_oracle.py on the same cube.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "mpi/comm.hpp"
#include "src/mnf/cpu_tile_ops.hpp"
#include "src/mnf/pipeline.hpp"
#include "tests/src/mnf/test_mnf_support.hpp"

namespace hb::mnf {
namespace {

const mpi::Runtime runtime(nullptr, nullptr);

struct Outcome {
  SceneStatistics stats;
  Covariances cov;
  Basis basis;
};

constexpr std::int64_t kLines = 23, kSamples = 17, kBands = 9, kKeep = 4;

// Beside this test file; HB_TEST_DATA is its data/ folder, which need not exist.
std::string oracle_script() { return (std::filesystem::path(HB_TEST_DATA).parent_path() / "mnf_oracle.py").string(); }

class SpyOracleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string python = "/usr/bin/python3";
    if (!std::filesystem::exists(python)) GTEST_SKIP() << python << " is missing";
    const auto dir = std::filesystem::temp_directory_path() / ("mnf_oracle_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    dir_ = dir.string();
    const auto cube_path = dir / "cube.f64", json_path = dir / "spy.json";
    std::ofstream(cube_path, std::ios::binary)
        .write(reinterpret_cast<const char*>(scene_.values.data()),
               static_cast<std::streamsize>(scene_.values.size() * sizeof(double)));
    const std::string command = python + " " + oracle_script() + " " + cube_path.string() + " " +
                                std::to_string(kLines) + " " + std::to_string(kSamples) + " " +
                                std::to_string(kBands) + " " + std::to_string(kKeep) + " " + json_path.string();
    const int status = std::system(command.c_str());
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) GTEST_SKIP() << python << " lacks numpy or the spectral package";
    ASSERT_EQ(status, 0) << command;
    spy_ = nlohmann::json::parse(std::ifstream(json_path));
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  Outcome analyse(Method method) const {
    const testing::MemoryCube<double> cube(scene_);
    auto ops = make_cpu_tile_ops();
    PipelineOptions options;
    options.method = method;
    options.tile_rows = 5;
    auto stats = gather_statistics(cube, *ops, mpi::Comm::world(), options);
    EXPECT_TRUE(stats.ok());
    auto cov = covariances(*stats, method);
    EXPECT_TRUE(cov.ok());
    auto basis = build_basis(*cov, stats->rules, method);
    EXPECT_TRUE(basis.ok());
    return {*stats, *cov, *basis};
  }

  std::vector<float> apply(const Outcome& outcome, const LinearMap& map) const {
    const testing::MemoryCube<double> cube(scene_);
    testing::MemoryWriter writer(kLines, kSamples, map.outputs());
    auto ops = make_cpu_tile_ops();
    EXPECT_TRUE(write_components(cube, *ops, outcome.stats.rules, map, writer, 6, mpi::Comm::world()).ok());
    return writer.values;
  }

  std::vector<double> spy(const char* key) const { return spy_[key].get<std::vector<double>>(); }

  const testing::Scene scene_ = testing::random_scene(kLines, kSamples, kBands, 31, 1000.0, 1.0);
  std::string dir_;
  nlohmann::json spy_;
};

void expect_relative(const std::vector<double>& got, const std::vector<double>& want, double tolerance,
                     const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0.0;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tolerance * scale) << what << " [" << i << "]";
}

// Components equal up to sign within 1e-6 of each component's standard deviation.
void expect_components(const std::vector<float>& got, const std::vector<double>& want, std::int64_t m) {
  const auto pixels = static_cast<std::int64_t>(want.size()) / m;
  for (std::int64_t j = 0; j < m; ++j) {
    double dot = 0.0, mean = 0.0, var = 0.0;
    for (std::int64_t p = 0; p < pixels; ++p) {
      dot += got[static_cast<std::size_t>(p * m + j)] * want[static_cast<std::size_t>(p * m + j)];
      mean += want[static_cast<std::size_t>(p * m + j)] / static_cast<double>(pixels);
    }
    for (std::int64_t p = 0; p < pixels; ++p) var += std::pow(want[static_cast<std::size_t>(p * m + j)] - mean, 2);
    const double sd = std::sqrt(var / static_cast<double>(pixels - 1));
    const double sign = dot < 0.0 ? -1.0 : 1.0;
    double worst = 0.0;
    for (std::int64_t p = 0; p < pixels; ++p)
      worst = std::max(worst, std::abs(sign * got[static_cast<std::size_t>(p * m + j)] - want[static_cast<std::size_t>(p * m + j)]));
    EXPECT_LE(worst, 1e-6 * sd) << "component " << j;
  }
}

TEST_F(SpyOracleTest, StatisticsMatchCalcStatsAndNoiseFromDiffs) {
  const auto outcome = analyse(Method::mnf);
  expect_relative(outcome.cov.data.mean, spy("mean"), 1e-12, "mean");
  expect_relative(outcome.cov.data.covariance.data, spy("data_covariance"), 1e-12, "data covariance");
  expect_relative(outcome.cov.noise.covariance.data, spy("noise_covariance"), 1e-12, "noise covariance");
}

TEST_F(SpyOracleTest, MnfEigenvaluesComponentsAndDenoisingMatchSpy) {
  const auto outcome = analyse(Method::mnf);
  const auto eigenvalues = spy("mnf_eigenvalues");
  ASSERT_EQ(outcome.basis.eigenvalues.size(), eigenvalues.size());
  for (std::size_t j = 0; j < eigenvalues.size(); ++j)
    EXPECT_NEAR(outcome.basis.eigenvalues[j], eigenvalues[j], 1e-10 * eigenvalues[j]) << j;
  Selection by_snr;
  by_snr.snr = 2.0;
  EXPECT_EQ(*select_components(outcome.basis, by_snr), spy_["mnf_num_with_snr_2"].get<std::int64_t>());
  expect_components(apply(outcome, reduction_map(outcome.basis, kKeep)), spy("mnf_components"), kKeep);
  const auto denoised = apply(outcome, denoise_map(outcome.basis, kKeep));
  const auto want = spy("mnf_denoised");
  ASSERT_EQ(denoised.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(denoised[i], want[i], 1e-6 * std::abs(want[i])) << i;
}

TEST_F(SpyOracleTest, PcaEigenvaluesAndComponentsMatchSpy) {
  const auto outcome = analyse(Method::pca);
  const auto eigenvalues = spy("pca_eigenvalues");
  ASSERT_EQ(outcome.basis.eigenvalues.size(), eigenvalues.size());
  for (std::size_t j = 0; j < eigenvalues.size(); ++j)
    EXPECT_NEAR(outcome.basis.eigenvalues[j], eigenvalues[j], 1e-10 * eigenvalues[j]) << j;
  expect_components(apply(outcome, reduction_map(outcome.basis, kKeep)), spy("pca_components"), kKeep);
}

}  // namespace
}  // namespace hb::mnf
