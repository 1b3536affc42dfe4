// The HDF5 cube reproduces what was written: every data type, every metadata field,
// any row range (chunk boundaries included), and leaves no file unless committed.
#include <gtest/gtest.h>

#include <filesystem>

#include "io/hdf5_cube.hpp"
#include "test_hdf5_support.hpp"

namespace hb::io {
namespace {

using testing::all_data_types;
using testing::expect_same_metadata;
using testing::full_metadata;
using testing::make_info;
using testing::pattern_rows;
using testing::ScratchDir;
using testing::write_pattern;

class Hdf5RoundTripTest : public ::testing::TestWithParam<DataType> {};

TEST_P(Hdf5RoundTripTest, ReadsBackPixelsAndEveryMetadataField) {
  ScratchDir dir;
  const auto info = make_info(GetParam(), {9, 7, 5}, full_metadata(5));
  const auto path = dir.file("scene.h5");
  write_pattern(path, info, 4);

  auto cube = open_cube(path);
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  EXPECT_EQ((*cube)->format(), CubeFormat::hdf5);
  EXPECT_EQ((*cube)->info().shape, info.shape);
  EXPECT_EQ((*cube)->info().type, info.type);
  expect_same_metadata((*cube)->info().meta, info.meta);
  EXPECT_EQ((*cube)->bytes_on_disk(), static_cast<std::int64_t>(std::filesystem::file_size(path)));
  EXPECT_GE((*cube)->bytes_on_disk(), info.total_bytes());

  std::vector<std::byte> all(static_cast<std::size_t>(info.total_bytes()));
  ASSERT_TRUE((*cube)->read_rows({0, 9}, all).ok());
  EXPECT_EQ(all, pattern_rows(info, {0, 9}));
}

INSTANTIATE_TEST_SUITE_P(AllTypes, Hdf5RoundTripTest, ::testing::ValuesIn(all_data_types()),
                         [](const auto& param) { return std::string(data_type_name(param.param)); });

TEST(Hdf5RoundTrip, DefaultMetadataStaysDefault) {
  ScratchDir dir;
  const auto info = make_info(DataType::f32, {2, 3, 4});
  write_pattern(dir.file("plain.h5"), info, 2);
  auto cube = open_cube(dir.file("plain.h5"));
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  expect_same_metadata((*cube)->info().meta, Metadata{});
}

TEST(Hdf5RoundTrip, EmptyFileTypeIsNotReplacedByTheDefault) {
  ScratchDir dir;
  Metadata meta;
  meta.file_type = "";
  meta.data_ignore_value = 0.0;
  meta.classes = 0;
  const auto info = make_info(DataType::u8, {2, 3, 4}, meta);
  write_pattern(dir.file("empty.h5"), info, 2);
  auto cube = open_cube(dir.file("empty.h5"));
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  expect_same_metadata((*cube)->info().meta, meta);
}

TEST(Hdf5RoundTrip, LongNameListsFitInDenseAttributeStorage) {
  ScratchDir dir;
  Metadata meta;
  for (int i = 0; i < 20000; ++i) meta.spectra_names.push_back("spectrum number " + std::to_string(i));
  const auto info = make_info(DataType::f32, {20000, 2, 3}, meta);
  write_pattern(dir.file("library.h5"), info, 5000);
  auto cube = open_cube(dir.file("library.h5"));
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  EXPECT_EQ((*cube)->info().meta.spectra_names, meta.spectra_names);
}

// 128 KiB rows: 16 rows per chunk, so 50 lines make chunks of 16, 16, 16 and 2 rows.
class Hdf5RowRangeTest : public ::testing::Test {
 protected:
  void SetUp() override { write_pattern(path_, info_, 7); }
  ScratchDir dir_;
  CubeInfo info_ = make_info(DataType::f32, {50, 512, 64});
  std::string path_ = dir_.file("rows.h5");
};

TEST_F(Hdf5RowRangeTest, ReadsAnyRangeIncludingPartialChunks) {
  auto cube = open_cube(path_);
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  for (const RowRange rows : {RowRange{0, 1}, RowRange{15, 17}, RowRange{10, 40}, RowRange{48, 50},
                              RowRange{0, 50}, RowRange{32, 48}}) {
    std::vector<std::byte> out(static_cast<std::size_t>(rows.rows() * info_.bytes_per_row()));
    ASSERT_TRUE((*cube)->read_rows(rows, out).ok());
    EXPECT_EQ(out, pattern_rows(info_, rows)) << "rows " << rows.begin << ".." << rows.end;
  }
}

TEST_F(Hdf5RowRangeTest, ReadsTilesWithHaloRows) {
  auto cube = open_cube(path_);
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  auto tile = (*cube)->read_tile({16, 20}, 3);
  ASSERT_TRUE(tile.ok()) << tile.error().line();
  EXPECT_EQ(tile->held(), (RowRange{13, 23}));
  const auto bytes = tile->bytes();
  EXPECT_EQ(std::vector<std::byte>(bytes.begin(), bytes.end()), pattern_rows(info_, {13, 23}));
}

TEST_F(Hdf5RowRangeTest, RejectsRangesOutsideTheSceneAndWrongBufferSizes) {
  auto cube = open_cube(path_);
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  std::vector<std::byte> out(static_cast<std::size_t>(2 * info_.bytes_per_row()));
  EXPECT_FALSE((*cube)->read_rows({49, 51}, out).ok());
  EXPECT_FALSE((*cube)->read_rows({0, 3}, out).ok());
  EXPECT_TRUE((*cube)->read_rows({5, 5}, {}).ok());
}

TEST(Hdf5Writer, UncommittedWriterLeavesNoFile) {
  ScratchDir dir;
  const auto info = make_info(DataType::i16, {4, 3, 2});
  {
    auto writer = create_cube(dir.file("abandoned.h5"), info);
    ASSERT_TRUE(writer.ok()) << writer.error().line();
    ASSERT_TRUE((*writer)->write_rows({0, 4}, pattern_rows(info, {0, 4})).ok());
    EXPECT_EQ(dir.names().size(), 1u);  // the hidden temporary
  }
  EXPECT_TRUE(dir.names().empty());
}

TEST(Hdf5Writer, CommitFailsUntilEveryRowIsWritten) {
  ScratchDir dir;
  const auto info = make_info(DataType::i16, {4, 3, 2});
  {
    auto writer = create_cube(dir.file("partial.h5"), info);
    ASSERT_TRUE(writer.ok()) << writer.error().line();
    ASSERT_TRUE((*writer)->write_rows({0, 2}, pattern_rows(info, {0, 2})).ok());
    ASSERT_TRUE((*writer)->write_rows({3, 4}, pattern_rows(info, {3, 4})).ok());
    const auto committed = (*writer)->commit();
    ASSERT_FALSE(committed.ok());
    EXPECT_NE(committed.error().message.find("row 2 of 4"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(dir.file("partial.h5")));
  }
  EXPECT_TRUE(dir.names().empty());
}

TEST(Hdf5Writer, CommitReplacesAnExistingFileAndLeavesNoTemporary) {
  ScratchDir dir;
  const auto info = make_info(DataType::u16, {3, 2, 2});
  write_pattern(dir.file("scene.h5"), info, 3);
  write_pattern(dir.file("scene.h5"), info, 1);
  EXPECT_EQ(dir.names(), std::vector<std::string>{"scene.h5"});
}

TEST(Hdf5Writer, RejectsWrongSizesRangesAndEmptyShapes) {
  ScratchDir dir;
  const auto info = make_info(DataType::u16, {3, 2, 2});
  auto writer = create_cube(dir.file("scene.h5"), info);
  ASSERT_TRUE(writer.ok()) << writer.error().line();
  EXPECT_FALSE((*writer)->write_rows({0, 1}, pattern_rows(info, {0, 2})).ok());
  EXPECT_FALSE((*writer)->write_rows({2, 4}, std::vector<std::byte>(32)).ok());
  auto empty = create_cube(dir.file("empty.h5"), make_info(DataType::u16, {0, 2, 2}));
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().kind, ErrorKind::bad_input);
}

}  // namespace
}  // namespace hb::io
