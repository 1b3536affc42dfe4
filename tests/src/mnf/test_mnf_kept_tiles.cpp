// Tiles kept on the GPU between the statistics and transform passes (TileOps::
// keep_tiles) give the same statistics bits and the same component bytes as the passes
// that read the scene twice: for a scene of samples and for a scaled int16 scene whose
// stored numbers are made physical on the device, at several tile sizes; and so does a
// scene loaded into the GPU's memory ahead of the passes (io/file_image.hpp), whose
// tiles the statistics pass borrows there. Skips without a GPU.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "io/cube.hpp"
#include "io/envi_header.hpp"
#include "io/file_image.hpp"
#include "io/tile_reader.hpp"
#include "io/units.hpp"
#include "src/mnf/pipeline.hpp"
#include "src/synth/synth.hpp"
#include "tests/src/mnf/test_mnf_support.hpp"

namespace hb::mnf {
namespace {

namespace fs = std::filesystem;

const mpi::Runtime runtime(nullptr, nullptr);  // MPI for Comm in a plain gtest binary

fs::path work_dir() {
  const auto dir = fs::temp_directory_path() / "hb_mnf_kept_tiles";
  fs::create_directories(dir);
  return dir;
}

// A synthetic int16 scene of 300 lines; with `gains`, its header scales every band.
std::string scene(bool gains) {
  synth::SynthOptions options;
  options.lines = 300;
  options.samples = 41;
  options.bands = 24;
  options.classes = 4;
  options.seed = 5;
  options.fill_border = 0.15;
  const auto path = (work_dir() / (gains ? "scaled.hdr" : "plain.hdr")).string();
  auto written = synth::write_synthetic_scene(path, options);
  EXPECT_TRUE(written.ok()) << written.error().line();
  if (gains) {
    std::ofstream header(written->scene, std::ios::app);
    header << "data gain values = {";
    for (int b = 0; b < options.bands; ++b) header << (b ? ", " : "") << 0.5 + 0.01 * b;
    header << "}\ndata offset values = {";
    for (int b = 0; b < options.bands; ++b) header << (b ? ", " : "") << -0.25 * b;
    header << "}\n";
  }
  return written->scene;
}

// The scene in `units`, as a command opens it (io::with_units): a library's default is
// raw, so a gtest names the units it means.
std::unique_ptr<io::Cube> open_scene(const std::string& path, io::Units units) {
  auto stored = io::open_stored_cube(path);
  EXPECT_TRUE(stored.ok()) << stored.error().line();
  return io::with_units(std::move(*stored), units);
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Statistics, then components to `output`: kept on the device or read twice.
SceneStatistics run(const io::Cube& cube, TileOps& ops, std::int64_t tile_rows, bool keep, const std::string& output) {
  PipelineOptions options;
  options.tile_rows = tile_rows;
  options.keep_tiles = keep;
  const auto comm = mpi::Comm::self();
  auto stats = gather_statistics(cube, ops, comm, options);
  EXPECT_TRUE(stats.ok()) << stats.error().line();
  EXPECT_EQ(stats->kept_tile_rows > 0, keep);
  auto cov = covariances(*stats, Method::mnf);
  auto basis = build_basis(*cov, stats->rules, Method::mnf);
  EXPECT_TRUE(basis.ok());
  io::CubeInfo info = cube.info();
  info.type = DataType::f32;
  info.shape.bands = 6;
  info.meta = {};
  auto writer = io::create_cube(output, info);
  EXPECT_TRUE(writer.ok());
  const auto rows = keep ? stats->kept_tile_rows : tile_rows_for(cube.info(), options, 6);
  const Status written =
      write_components(cube, ops, stats->rules, reduction_map(*basis, 6), **writer, rows, comm, &stats->blocks, keep);
  EXPECT_TRUE(written.ok()) << written.error().line();
  ops.drop_kept();
  EXPECT_TRUE((*writer)->commit().ok());
  return std::move(*stats);
}

TEST(MnfKeptTiles, SameStatisticsAndComponentsAsTwoReads) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: the CUDA backend runs on the device machine";
  auto gpu = std::move(make_tile_ops(BackendKind::cuda).value());
  for (const bool gains : {false, true})
    for (const std::int64_t tile_rows : {1, 130, 0}) {
      SCOPED_TRACE(std::string(gains ? "scaled" : "plain") + " tile rows " + std::to_string(tile_rows));
      const auto cube = open_scene(scene(gains), gains ? io::Units::physical : io::Units::raw);
      ASSERT_EQ(io::device_source(*cube).units != nullptr, gains);
      const auto read = (work_dir() / "read.img").string(), kept = (work_dir() / "kept.img").string();
      const auto twice = run(*cube, *gpu, tile_rows, false, read);
      const auto once = run(*cube, *gpu, tile_rows, true, kept);
      EXPECT_EQ(twice.data.count, once.data.count);
      EXPECT_EQ(twice.data.sum, once.data.sum);
      EXPECT_EQ(twice.data.cross, once.data.cross);
      EXPECT_EQ(twice.noise.cross, once.noise.cross);
      const auto expected = file_bytes(read);
      ASSERT_FALSE(expected.empty());
      EXPECT_TRUE(expected == file_bytes(kept)) << "component bytes differ";
    }
}

TEST(MnfKeptTiles, SceneLoadedOntoTheGpuGivesTheSameBits) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: the CUDA backend runs on the device machine";
  auto gpu = std::move(make_tile_ops(BackendKind::cuda).value());
  const int device = gpu->device().gpu();
  for (const bool gains : {false, true}) {
    SCOPED_TRACE(gains ? "scaled" : "plain");
    const auto header = scene(gains);
    const auto units = gains ? io::Units::physical : io::Units::raw;
    const auto data = io::resolve_envi_paths(header)->data;
    const auto read = (work_dir() / "read.img").string(), loaded = (work_dir() / "loaded.img").string();
    const auto from_file = run(*open_scene(header, units), *gpu, 0, true, read);
    ASSERT_TRUE(io::load_file_image(data, gpu->device().image_sink()).get().ok());
    const auto cube = open_scene(header, units);
    {
      io::TileReader reader(io::device_source(*cube).cube, {{0, 130}}, 1, {}, nullptr, device);
      auto tile = reader.next();
      ASSERT_TRUE(tile.ok() && *tile != nullptr);
      EXPECT_EQ((*tile)->device(), device) << "the tile was read, not borrowed from the GPU";
    }
    const auto from_gpu = run(*cube, *gpu, 0, true, loaded);
    EXPECT_EQ(from_file.data.count, from_gpu.data.count);
    EXPECT_EQ(from_file.data.sum, from_gpu.data.sum);
    EXPECT_EQ(from_file.data.cross, from_gpu.data.cross);
    EXPECT_EQ(from_file.noise.cross, from_gpu.noise.cross);
    EXPECT_TRUE(file_bytes(read) == file_bytes(loaded)) << "component bytes differ";
    io::drop_file_image(data);
  }
}

}  // namespace
}  // namespace hb::mnf
