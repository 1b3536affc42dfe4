// Scenes loaded into memory ahead of the step that reads them (io/file_image.hpp): tiles
// of a loaded BIP scene borrow the image's rows and hold the file's bytes; BIL and BSQ
// scenes read the same bytes from the image; a file changed after its load, or an image
// forgotten, is read from disk again.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "io/cube.hpp"
#include "io/envi_header.hpp"
#include "io/file_image.hpp"
#include "io/tile_reader.hpp"
#include "tests/io/envi_test_support.hpp"
#include "tests/io/host_image_sink.hpp"

namespace hb::io {
namespace {

CubeInfo scene_info() {
  CubeInfo info;
  info.shape = {23, 31, 17};  // lines, samples, bands
  info.type = DataType::i16;
  return info;
}

// An ENVI scene of distinct samples (test::sample_value) in `interleave`; its data file.
std::string write_scene(const std::string& header, Interleave interleave) {
  const CubeInfo info = scene_info();
  WriteOptions options;
  options.interleave = interleave;
  auto writer = create_cube(header, info, options);
  EXPECT_TRUE(writer.ok()) << writer.error().line();
  const auto rows = test::canonical_rows(info, 0, info.shape.lines);
  EXPECT_TRUE((*writer)->write_rows({0, info.shape.lines}, rows).ok());
  EXPECT_TRUE((*writer)->commit().ok());
  return resolve_envi_paths(header)->data;
}

bool holds_rows(const Tile& tile) {
  const auto expected = test::canonical_rows(scene_info(), tile.held().begin, tile.held().end);
  return std::equal(expected.begin(), expected.end(), tile.bytes().begin(), tile.bytes().end());
}

bool inside(const Tile& tile, const FileImage& image) {
  const std::byte* at = tile.bytes().data();
  return at >= image.bytes.get() && at + tile.bytes().size() <= image.bytes.get() + image.size;
}

TEST(FileImage, LoadedBipTilesBorrowTheImageAndHoldTheFileBytes) {
  const test::TempDir dir;
  const auto data = write_scene(dir.file("bip.hdr"), Interleave::bip);
  ASSERT_TRUE(load_file_image(data, test::host_image_sink()).get().ok());
  const auto image = file_image(data);
  ASSERT_NE(image, nullptr);
  auto cube = open_stored_cube(dir.file("bip.hdr"));
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  const std::vector<RowRange> cores{{0, 7}, {7, 20}, {20, 23}};
  TileReader reader(**cube, cores, 2);  // halo rows: each tile's held rows reach into its neighbours'
  for (const RowRange& core : cores) {
    auto tile = reader.next();
    ASSERT_TRUE(tile.ok() && *tile != nullptr);
    EXPECT_EQ((*tile)->core(), core);
    EXPECT_TRUE(holds_rows(**tile)) << "rows from " << core.begin;
    EXPECT_TRUE(inside(**tile, *image)) << "rows from " << core.begin;
  }
  std::vector<std::byte> rows(static_cast<std::size_t>(5 * scene_info().bytes_per_row()));
  ASSERT_TRUE((*cube)->read_rows({3, 8}, rows).ok());
  EXPECT_EQ(rows, test::canonical_rows(scene_info(), 3, 8));
  drop_file_image(data);
  EXPECT_EQ(file_image(data), nullptr);
}

TEST(FileImage, BilAndBsqScenesReadTheSameBytesFromTheImage) {
  const test::TempDir dir;
  for (const Interleave interleave : {Interleave::bil, Interleave::bsq}) {
    const auto header = dir.file(interleave == Interleave::bil ? "bil.hdr" : "bsq.hdr");
    const auto data = write_scene(header, interleave);
    ASSERT_TRUE(load_file_image(data, test::host_image_sink()).get().ok());
    auto cube = open_stored_cube(header);
    ASSERT_TRUE(cube.ok()) << cube.error().line();
    auto tile = (*cube)->read_tile({4, 19}, 1);
    ASSERT_TRUE(tile.ok()) << tile.error().line();
    EXPECT_TRUE(holds_rows(*tile));
    EXPECT_FALSE(inside(*tile, *file_image(data)));  // reordered into a tile of its own
    drop_file_image(data);
  }
}

TEST(FileImage, AFileChangedAfterItsLoadIsReadFromDiskAgain) {
  const test::TempDir dir;
  const auto data = write_scene(dir.file("changed.hdr"), Interleave::bip);
  ASSERT_TRUE(load_file_image(data, test::host_image_sink()).get().ok());
  auto bytes = test::read_file(data);
  std::reverse(bytes.begin(), bytes.end());
  test::write_file(data, bytes);  // the same size, other bytes
  EXPECT_EQ(file_image(data), nullptr);
  auto cube = open_stored_cube(dir.file("changed.hdr"));
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  auto tile = (*cube)->read_tile({0, 23});
  ASSERT_TRUE(tile.ok()) << tile.error().line();
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), reinterpret_cast<const char*>(tile->bytes().data())));
  drop_file_image(data);
}

TEST(FileImage, AMissingFileLoadsNothing) {
  EXPECT_FALSE(load_file_image("/nonexistent/hb_file_image.img", test::host_image_sink()).get().ok());
  EXPECT_EQ(file_image("/nonexistent/hb_file_image.img"), nullptr);
  drop_file_image("/nonexistent/hb_file_image.img");
}

}  // namespace
}  // namespace hb::io
