// HDF5 cubes whose rows are plain bytes are read with pread (io/hdf5_row_reads.hpp), so
// that a tile reader may read them ahead on its own thread; every other layout stays
// with the library. Both give the written values for any row range: chunk boundaries,
// partial last chunks, single rows, ranges out of order.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstring>
#include <vector>

#include "io/hdf5_cube.hpp"
#include "test_hdf5_support.hpp"

namespace hb::io {
namespace {

using testing::all_data_types;
using testing::make_info;
using testing::pattern_rows;
using testing::ScratchDir;
using testing::write_pattern;

// The row ranges every case reads, in this order (out of order on purpose).
std::vector<RowRange> ranges_of(std::int64_t lines) {
  return {{0, lines}, {0, 1}, {6, 8}, {lines - 1, lines}, {3, lines - 2}, {1, 2}, {lines / 2, lines}};
}

void expect_rows_as_written(const Cube& cube, const CubeInfo& info) {
  for (const auto rows : ranges_of(info.shape.lines)) {
    std::vector<std::byte> got(static_cast<std::size_t>(rows.rows() * info.bytes_per_row()));
    const auto read = cube.read_rows(rows, got);
    ASSERT_TRUE(read.ok()) << read.error().line();
    EXPECT_EQ(got, pattern_rows(info, rows)) << "rows [" << rows.begin << ", " << rows.end << ")";
  }
}

// A cube hyperbatch writes (`rows_per_write` rows a call) is read without the library.
void expect_written_cube_reads(DataType type, CubeShape shape, std::int64_t rows_per_write) {
  ScratchDir dir;
  const auto path = dir.file("written.h5");
  const auto info = make_info(type, shape);
  write_pattern(path, info, rows_per_write);
  auto cube = open_cube(path);
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  EXPECT_FALSE((*cube)->reads_through_hdf5()) << data_type_name(type);
  expect_rows_as_written(**cube, info);
}

// Several chunks of whole rows (the chunk rule gives 7 rows of 614 x 224 int16, 1 row of
// float64) and a partial last one.
TEST(Hdf5RowReads, CubesWrittenByHyperbatchAreReadWithoutTheLibrary) {
  for (const auto type : {DataType::i16, DataType::f64}) expect_written_cube_reads(type, {50, 614, 224}, 9);
}

TEST(Hdf5RowReads, EveryDataTypeReadsBack) {
  for (const auto type : all_data_types()) expect_written_cube_reads(type, {23, 9, 5}, 4);
}

// A /cube made with the library directly: `layout` contiguous or chunked by `chunk`,
// deflated when `deflate`, stored big-endian when `big_endian`, only its first
// `written_lines` written (all when negative), after a user block of `user_block` bytes.
struct Made {
  H5D_layout_t layout = H5D_CHUNKED;
  hsize_t chunk[3] = {4, 9, 5};
  bool deflate = false;
  bool big_endian = false;
  std::int64_t written_lines = -1;
  hsize_t user_block = 0;
};

void make_cube(const std::string& path, const CubeInfo& info, const Made& made) {
  const hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  if (made.user_block > 0) H5Pset_userblock(fcpl, made.user_block);
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  H5Pclose(fcpl);
  const hsize_t dims[3] = {static_cast<hsize_t>(info.shape.lines), static_cast<hsize_t>(info.shape.samples),
                           static_cast<hsize_t>(info.shape.bands)};
  const hid_t space = H5Screate_simple(3, dims, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (made.layout == H5D_CHUNKED) {
    H5Pset_chunk(dcpl, 3, made.chunk);
    if (made.deflate) H5Pset_deflate(dcpl, 4);
  } else {
    H5Pset_layout(dcpl, H5D_CONTIGUOUS);
  }
  const hid_t stored = made.big_endian ? H5T_IEEE_F32BE : H5T_IEEE_F32LE;
  const hid_t cube = H5Dcreate2(file, "cube", stored, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  const std::int64_t lines = made.written_lines < 0 ? info.shape.lines : made.written_lines;
  if (lines > 0) {
    const auto bytes = pattern_rows(info, {0, lines});
    const hsize_t start[3] = {0, 0, 0};
    const hsize_t count[3] = {static_cast<hsize_t>(lines), dims[1], dims[2]};
    H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
    const hid_t memory = H5Screate_simple(3, count, nullptr);
    EXPECT_GE(H5Dwrite(cube, H5T_NATIVE_FLOAT, memory, space, H5P_DEFAULT, bytes.data()), 0);
    H5Sclose(memory);
  }
  H5Dclose(cube);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
}

void expect_made_cube_reads(const Made& made, bool without_the_library) {
  ScratchDir dir;
  const auto path = dir.file("made.h5");
  const auto info = make_info(DataType::f32, {18, 9, 5});
  make_cube(path, info, made);
  auto cube = open_cube(path);
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  EXPECT_EQ((*cube)->reads_through_hdf5(), !without_the_library);
  expect_rows_as_written(**cube, info);
}

TEST(Hdf5RowReads, ContiguousRowsAreReadWithoutTheLibrary) {
  expect_made_cube_reads({.layout = H5D_CONTIGUOUS}, true);
}

TEST(Hdf5RowReads, WholeRowChunksAreReadWithoutTheLibrary) {
  expect_made_cube_reads({}, true);  // 18 rows in chunks of 4: a partial last chunk
}

TEST(Hdf5RowReads, OtherLayoutsStayWithTheLibrary) {
  expect_made_cube_reads({.deflate = true}, false);
  expect_made_cube_reads({.big_endian = true}, false);
  expect_made_cube_reads({.chunk = {4, 3, 5}}, false);  // chunks split the samples
  expect_made_cube_reads({.chunk = {4, 9, 2}}, false);  // and the bands
  // Chunk addresses count from the user block's end or the file's start by version.
  expect_made_cube_reads({.user_block = 512}, false);
  expect_made_cube_reads({.layout = H5D_CONTIGUOUS, .user_block = 512}, false);
}

TEST(Hdf5RowReads, UnwrittenChunksStayWithTheLibrary) {
  ScratchDir dir;
  const auto path = dir.file("partial.h5");
  const auto info = make_info(DataType::f32, {18, 9, 5});
  make_cube(path, info, {.written_lines = 8});  // chunks from row 8 on never written
  auto cube = open_cube(path);
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  EXPECT_TRUE((*cube)->reads_through_hdf5());
  std::vector<std::byte> got(static_cast<std::size_t>(8 * info.bytes_per_row()));
  ASSERT_TRUE((*cube)->read_rows({0, 8}, got).ok());
  EXPECT_EQ(got, pattern_rows(info, {0, 8}));
}

}  // namespace
}  // namespace hb::io
