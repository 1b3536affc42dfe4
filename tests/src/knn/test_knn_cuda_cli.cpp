// `hyperbatch knn --backend cuda` against `--backend cpu` on Jasper Ridge (real AVIRIS
// data in ../shared/data): the same class map for every --select method, metric,
// weighting and chunking. (cuBLAS and OpenBLAS round inner products differently, so
// neighbours tied to FP32 rounding could in principle swap; on this scene none changes
// a label, and the test reports how many pixels differ if one ever does.) Skips
// without a GPU or the data.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "io/cube.hpp"
#include "mpi/comm.hpp"
#include "tests/src/knn/knn_cuda_test_support.hpp"
#include "tests/support/cli_path.hpp"
#include "tests/support/scratch_dir.hpp"

namespace hb::knn {
namespace {

const mpi::Runtime runtime(nullptr, nullptr);

const std::string kJasper = std::string(HB_SHARED_DATA) + "/jasper_ridge";

std::vector<std::byte> read_all(const std::string& path) {
  auto cube = io::open_cube(path);
  EXPECT_TRUE(cube.ok()) << (cube.ok() ? "" : cube.error().line());
  if (!cube.ok()) return {};
  const auto& info = (*cube)->info();
  std::vector<std::byte> bytes(static_cast<std::size_t>(info.bytes_per_row() * info.shape.lines));
  EXPECT_TRUE((*cube)->read_rows({0, info.shape.lines}, bytes).ok());
  return bytes;
}

int run_knn(const std::string& out, const std::string& backend, const std::string& extra) {
  const std::string command = hb::test::cli_path() + " --quiet knn " + kJasper + "/jasper_ridge.hdr --truth " +
                              kJasper + "/jasper_ridge_labels_gt.hdr --train-per-class 60 --seed 7 -o " + out +
                              " --backend " + backend + " " + extra;
  return std::system(command.c_str());
}

TEST(CudaKnnCli, SameClassMapAsTheCpuOnJasperRidge) {
  HB_REQUIRE_GPU();
  if (!std::filesystem::exists(kJasper + "/jasper_ridge.hdr")) GTEST_SKIP() << "Jasper Ridge not in " << HB_SHARED_DATA;
  if (hb::test::cli_path().empty()) GTEST_SKIP() << "no hyperbatch binary at " << HB_CLI << " or beside the test";
  hb::test::ScratchDir dir("hb_knn_cuda_cli");
  const std::vector<std::string> cases{"-k 1", "-k 5", "-k 15 --weights distance", "-k 5 --metric cosine",
                                       "-k 5 --train-chunk-rows 50"};
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const std::string cpu = dir.file("cpu" + std::to_string(c) + ".hdr");
    ASSERT_EQ(run_knn(cpu, "cpu", cases[c]), 0) << cases[c];
    const auto want = read_all(cpu);
    ASSERT_FALSE(want.empty());
    for (const std::string select : {"auto", "kmin", "bitonic", "fast", "tensor"}) {
      const std::string gpu = dir.file("gpu" + std::to_string(c) + select + ".hdr");
      ASSERT_EQ(run_knn(gpu, "cuda", cases[c] + " --select " + select), 0) << cases[c] << " " << select;
      const auto got = read_all(gpu);
      ASSERT_EQ(got.size(), want.size());
      std::size_t differing = 0;
      for (std::size_t i = 0; i < got.size(); i += 2) differing += got[i] != want[i] || got[i + 1] != want[i + 1];
      EXPECT_EQ(differing, 0u) << cases[c] << " --select " << select << ": class labels differ";
    }
  }
}

}  // namespace
}  // namespace hb::knn
