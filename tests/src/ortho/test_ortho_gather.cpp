// The CPU gather against the obvious loop, for pixel sizes of every sample type and band count.
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

TEST(OrthoGather, CpuCopiesSourcePixelsAndFillsNoData) {
  auto gatherer = make_cpu_gatherer();
  for (std::int64_t pixel_bytes : {1, 2, 3, 4, 8, 12, 448, 900}) {
    auto c = test::make_gather_case(pixel_bytes, 10000, static_cast<std::uint32_t>(pixel_bytes));
    std::vector<std::byte> out(c.expected.size());
    ASSERT_TRUE(gatherer->gather(c.tile, out).ok());
    EXPECT_EQ(out, c.expected) << pixel_bytes << " bytes a pixel";
  }
}

// A grid across the flight line (each grid row points at every product row): a budget
// of a few product rows splits the tiles down to single grid rows, with the same bytes.
TEST(OrthoRun, SmallSourceBudgetGivesTheSameBytes) {
  static const mpi::Runtime runtime(nullptr, nullptr);  // ortho::run uses the world communicator
  hb::test::ScratchDir dir("hb_ortho_budget");
  const io::CubeShape scene{60, 8, 5}, grid{9, 60, 2};
  std::vector<std::int16_t> product(static_cast<std::size_t>(scene.pixels() * scene.bands));
  for (std::size_t i = 0; i < product.size(); ++i) product[i] = static_cast<std::int16_t>(i);
  write_cube(dir.file("prod.hdr"), io::CubeInfo{scene, DataType::i16, {}}, product);
  std::vector<std::int32_t> glt(static_cast<std::size_t>(grid.pixels() * 2));
  for (std::int64_t y = 0; y < grid.lines; ++y)
    for (std::int64_t x = 0; x < grid.samples; ++x) {
      const auto p = static_cast<std::size_t>(y * grid.samples + x);
      glt[2 * p] = static_cast<std::int32_t>(y % scene.samples + 1);
      glt[2 * p + 1] = static_cast<std::int32_t>(scene.lines - x);  // the product's rows run along the grid rows
    }
  write_cube(dir.file("glt.hdr"), io::CubeInfo{grid, DataType::i32, {}}, glt);
  for (const std::int64_t budget : {std::int64_t{1} << 30, std::int64_t{200}}) {
    OrthoJob job;
    job.product = dir.file("prod.hdr");
    job.glt = dir.file("glt.hdr");
    job.output = dir.file("out_" + std::to_string(budget) + ".hdr");
    job.backend = BackendKind::cpu;
    job.tile_rows = 4;
    job.tile_budget_bytes = budget;
    auto result = run(job);
    ASSERT_TRUE(result.ok()) << result.error().message;
    EXPECT_EQ(result->filled, grid.pixels());
  }
  EXPECT_EQ(file_bytes(dir.file("out_200.img")), file_bytes(dir.file("out_1073741824.img")));
  const auto out = file_bytes(dir.file("out_200.img"));
  const auto* values = reinterpret_cast<const std::int16_t*>(out.data());
  EXPECT_EQ(values[0], product[static_cast<std::size_t>(((scene.lines - 1) * scene.samples + 0) * scene.bands)]);
}

}  // namespace
}  // namespace hb::ortho
