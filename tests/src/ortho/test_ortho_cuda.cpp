// The CUDA gather gives the CPU gather's bytes (byte and word kernels, no-data fill),
// and `ortho --backend cuda` writes the same file as `--backend cpu`. Skips without a GPU.
#include <gtest/gtest.h>

#include <random>
#include <span>

#include "io/cube.hpp"
#include "mpi/comm.hpp"
#include "src/ortho/run.hpp"
#include "tests/src/ortho/gather_cases.hpp"
#include "tests/support/scratch_dir.hpp"

namespace hb::ortho {
namespace {

using hb::test::file_bytes;
using test::write_cube;

TEST(OrthoCuda, GatherMatchesCpu) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto cuda = make_gatherer(BackendKind::cuda);
  ASSERT_TRUE(cuda.ok()) << cuda.error().message;
  auto cpu = make_cpu_gatherer();
  for (std::int64_t pixel_bytes : {1, 2, 3, 4, 8, 12, 448, 900}) {
    auto c = test::make_gather_case(pixel_bytes, 100000, static_cast<std::uint32_t>(pixel_bytes) + 1);
    std::vector<std::byte> on_gpu(c.expected.size()), on_cpu(c.expected.size());
    ASSERT_TRUE((*cuda)->gather(c.tile, on_gpu).ok());
    ASSERT_TRUE(cpu->gather(c.tile, on_cpu).ok());
    EXPECT_EQ(on_gpu, c.expected) << pixel_bytes << " bytes a pixel";
    EXPECT_EQ(on_gpu, on_cpu) << pixel_bytes << " bytes a pixel";
  }
}

TEST(OrthoCuda, EmptyTileAndAllNoData) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  auto cuda = make_gatherer(BackendKind::cuda);
  ASSERT_TRUE(cuda.ok()) << cuda.error().message;
  auto c = test::make_gather_case(4, 0, 3);
  std::vector<std::byte> out;
  EXPECT_TRUE((*cuda)->gather(c.tile, out).ok());
  io::GltRows none;
  none.sample.assign(64, -1);
  none.line.assign(64, -1);
  const std::vector<std::byte> fill(8, std::byte{0x7f});
  const GatherTile tile{{}, {0, 0}, 1, 8, &none, 0, 64, fill};
  std::vector<std::byte> filled(64 * 8);
  ASSERT_TRUE((*cuda)->gather(tile, filled).ok());
  EXPECT_EQ(filled, std::vector<std::byte>(64 * 8, std::byte{0x7f}));
}

TEST(OrthoCuda, RunWritesTheCpuBytes) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  static const mpi::Runtime runtime(nullptr, nullptr);  // ortho::run uses the world communicator
  hb::test::ScratchDir dir("hb_ortho_cuda");
  const io::CubeShape scene{40, 30, 7}, grid{50, 45, 2};
  std::vector<float> product(static_cast<std::size_t>(scene.pixels() * scene.bands));
  for (std::size_t i = 0; i < product.size(); ++i) product[i] = static_cast<float>(i) * 0.5f;
  write_cube(dir.file("prod.hdr"), io::CubeInfo{scene, DataType::f32, {}}, product);
  std::vector<std::int32_t> glt(static_cast<std::size_t>(grid.pixels() * 2));
  std::mt19937 rng(5);
  for (std::size_t p = 0; p < glt.size() / 2; ++p) {
    if (rng() % 5 == 0) continue;  // 0 = no data
    const auto sign = rng() % 7 == 0 ? -1 : 1;  // negative: filled from a neighbour
    glt[2 * p] = sign * static_cast<std::int32_t>(1 + rng() % scene.samples);
    glt[2 * p + 1] = sign * static_cast<std::int32_t>(1 + rng() % scene.lines);
  }
  write_cube(dir.file("glt.hdr"), io::CubeInfo{grid, DataType::i32, {}}, glt);
  for (const char* backend : {"cpu", "cuda"}) {
    OrthoJob job;
    job.product = dir.file("prod.hdr");
    job.glt = dir.file("glt.hdr");
    job.output = dir.file(std::string(backend) + ".hdr");
    job.backend = *backend_kind_from_name(backend);
    job.tile_rows = 7;
    auto result = run(job);
    ASSERT_TRUE(result.ok()) << result.error().message;
    EXPECT_EQ(result->backend, backend);
  }
  EXPECT_EQ(file_bytes(dir.file("cuda.img")), file_bytes(dir.file("cpu.img")));
}

}  // namespace
}  // namespace hb::ortho
