// The CPU and CUDA halves of the tile operations give the same MNF/PCA: statistics, eigenvalues (1e-9 relative,
// LAPACK against cuSOLVER) and components, for every noise estimator and tile size, on a synthetic
// scene with a no-data border and on the real Jasper Ridge scene. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "io/cube.hpp"
#include "src/mnf/pipeline.hpp"
#include "src/synth/synth.hpp"
#include "tests/src/mnf/test_mnf_support.hpp"

namespace hb::mnf {
namespace {

namespace fs = std::filesystem;

const mpi::Runtime runtime(nullptr, nullptr);  // MPI for Comm in a plain gtest binary

class MnfBackends : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: the CUDA backend runs on the device machine";
    cpu_ = std::move(make_tile_ops(BackendKind::cpu).value());
    gpu_ = std::move(make_tile_ops(BackendKind::cuda).value());
  }

  static std::string synthetic_scene() {
    static const std::string path = [] {
      auto dir = fs::temp_directory_path() / "hb_mnf_backends";
      fs::create_directories(dir);
      synth::SynthOptions options;
      options.lines = 97;
      options.samples = 83;
      options.bands = 60;
      options.classes = 5;
      options.seed = 11;
      options.fill_border = 0.2;
      auto written = synth::write_synthetic_scene((dir / "scene.hdr").string(), options);
      EXPECT_TRUE(written.ok()) << written.error().line();
      return written->scene;
    }();
    return path;
  }

  std::unique_ptr<TileOps> cpu_, gpu_;
  mpi::Comm comm_ = mpi::Comm::self();
};

void expect_close(const std::vector<double>& a, const std::vector<double>& b, double rel, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  double scale = 0;
  for (double v : a) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], rel * scale) << what << " [" << i << "]";
}

void compare_backends(const std::string& scene, TileOps& cpu, TileOps& gpu, const mpi::Comm& comm, Method method,
                      NoiseEstimator estimator, std::int64_t tile_rows) {
  auto cube = io::open_cube(scene);
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  PipelineOptions options;
  options.method = method;
  options.estimator = estimator;
  options.tile_rows = tile_rows;
  auto on_cpu = gather_statistics(**cube, cpu, comm, options);
  auto on_gpu = gather_statistics(**cube, gpu, comm, options);
  ASSERT_TRUE(on_cpu.ok()) << on_cpu.error().line();
  ASSERT_TRUE(on_gpu.ok()) << on_gpu.error().line();
  EXPECT_EQ(on_cpu->data.count, on_gpu->data.count);
  EXPECT_EQ(on_cpu->noise.count, on_gpu->noise.count);
  expect_close(on_cpu->data.sum, on_gpu->data.sum, 1e-12, "data sums");
  expect_close(on_cpu->data.cross, on_gpu->data.cross, 1e-12, "data cross products");
  if (method == Method::mnf) expect_close(on_cpu->noise.cross, on_gpu->noise.cross, 1e-12, "noise cross products");

  auto cov = covariances(*on_cpu, method);
  auto gpu_cov = covariances(*on_gpu, method);
  ASSERT_TRUE(cov.ok() && gpu_cov.ok());
  auto basis = build_basis(*cov, on_cpu->rules, method);
  BasisOptions on_device;  // the GPU basis comes from cuSOLVER, the CPU one from LAPACK
  on_device.eigen = [&gpu](const linalg::Matrix& a) { return gpu.symmetric_eigen(a); };
  auto gpu_basis = build_basis(*gpu_cov, on_gpu->rules, method, on_device);
  ASSERT_TRUE(basis.ok() && gpu_basis.ok());
  ASSERT_EQ(basis->eigenvalues.size(), gpu_basis->eigenvalues.size());
  for (std::size_t i = 0; i < basis->eigenvalues.size(); ++i)
    EXPECT_NEAR(gpu_basis->eigenvalues[i], basis->eigenvalues[i], 1e-9 * std::abs(basis->eigenvalues[i]))
        << "eigenvalue " << i;

  // Components from the same map on both backends: equal to float32 rounding.
  const auto m = std::min<std::int64_t>(10, basis->components());
  const auto map = reduction_map(*basis, m);
  auto tile = (*cube)->read_tile({0, (*cube)->info().shape.lines});
  ASSERT_TRUE(tile.ok());
  std::vector<float> z_cpu(static_cast<std::size_t>(tile->pixels() * m)), z_gpu(z_cpu.size());
  ASSERT_TRUE(cpu.transform(*tile, on_cpu->rules, map, z_cpu).ok());
  ASSERT_TRUE(gpu.transform(*tile, on_cpu->rules, map, z_gpu).ok());
  for (std::size_t i = 0; i < z_cpu.size(); ++i) {
    if (std::isnan(z_cpu[i])) {
      ASSERT_TRUE(std::isnan(z_gpu[i])) << "fill at " << i;
      continue;
    }
    ASSERT_NEAR(z_gpu[i], z_cpu[i], 1e-5 * (1 + std::abs(z_cpu[i]))) << "component value " << i;
  }
}

TEST_F(MnfBackends, SyntheticSceneEveryEstimatorAndTileSize) {
  for (auto estimator : {kDiff, kMean3x3, kMedian3x3})
    for (std::int64_t tile_rows : {1, 13, 0}) {
      SCOPED_TRACE(std::string(noise_estimator_name(estimator)) + " tile rows " + std::to_string(tile_rows));
      compare_backends(synthetic_scene(), *cpu_, *gpu_, comm_, Method::mnf, estimator, tile_rows);
    }
}

TEST_F(MnfBackends, SyntheticScenePca) {
  compare_backends(synthetic_scene(), *cpu_, *gpu_, comm_, Method::pca, kDiff, 7);
}

TEST_F(MnfBackends, JasperRidge) {
  const std::string scene = std::string(HB_SHARED_DATA) + "/jasper_ridge/jasper_ridge.hdr";
  if (!fs::exists(scene)) GTEST_SKIP() << scene << " is absent (../shared beside the clone)";
  compare_backends(scene, *cpu_, *gpu_, comm_, Method::mnf, kDiff, 17);
}

}  // namespace
}  // namespace hb::mnf
