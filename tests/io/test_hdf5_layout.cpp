// The documented layout of the HDF5 cube: chunk rule, on-disk types, no filters, and
// the format marker on the root group.
#include <gtest/gtest.h>
#include <hdf5.h>

#include "io/hdf5_layout.hpp"
#include "test_hdf5_support.hpp"

namespace hb::io {
namespace {

using testing::make_info;
using testing::ScratchDir;
using testing::write_pattern;

std::array<hsize_t, 3> chunk_of(std::int64_t lines, std::int64_t samples, std::int64_t bands, DataType type) {
  return h5::chunk_shape(make_info(type, {lines, samples, bands}));
}

TEST(Hdf5ChunkRule, WholeRowsUpToTwoMebibytes) {
  // AVIRIS-like rows: 614 x 224 x int16 = 275,072 bytes, 7 rows = 1.84 MiB.
  EXPECT_EQ(chunk_of(512, 614, 224, DataType::i16), (std::array<hsize_t, 3>{7, 614, 224}));
  // 128 KiB rows: exactly 16 rows.
  EXPECT_EQ(chunk_of(50, 512, 64, DataType::f32), (std::array<hsize_t, 3>{16, 512, 64}));
}

TEST(Hdf5ChunkRule, SmallScenesAreOneChunk) {
  EXPECT_EQ(chunk_of(9, 7, 5, DataType::u8), (std::array<hsize_t, 3>{9, 7, 5}));
}

TEST(Hdf5ChunkRule, RowsLargerThanTheTargetAreOneRowEach) {
  // 3 MiB rows.
  EXPECT_EQ(chunk_of(10, 4096, 192, DataType::f32), (std::array<hsize_t, 3>{1, 4096, 192}));
}

TEST(Hdf5ChunkRule, RowsPastTheFourGibibyteLimitSplitSamples) {
  // One row is 2^20 samples x 1024 bands x 8 bytes = 8 GiB: chunks of 524,287 samples.
  const auto chunk = chunk_of(4, std::int64_t{1} << 20, 1024, DataType::f64);
  EXPECT_EQ(chunk[0], 1u);
  EXPECT_EQ(chunk[2], 1024u);
  EXPECT_LE(chunk[1] * chunk[2] * 8, static_cast<hsize_t>(h5::kChunkMaxBytes));
  EXPECT_GT((chunk[1] + 1) * chunk[2] * 8, static_cast<hsize_t>(h5::kChunkMaxBytes));
}

TEST(Hdf5Layout, FileHasTheDocumentedChunksTypeAndMarker) {
  ScratchDir dir;
  const auto path = dir.file("layout.h5");
  write_pattern(path, make_info(DataType::i16, {50, 614, 224}), 10);

  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t cube = H5Dopen2(file, "cube", H5P_DEFAULT);
  const hid_t dcpl = H5Dget_create_plist(cube);
  EXPECT_EQ(H5Pget_layout(dcpl), H5D_CHUNKED);
  hsize_t chunk[3] = {0, 0, 0};
  EXPECT_EQ(H5Pget_chunk(dcpl, 3, chunk), 3);
  EXPECT_EQ(chunk[0], 7u);
  EXPECT_EQ(chunk[1], 614u);
  EXPECT_EQ(chunk[2], 224u);
  EXPECT_EQ(H5Pget_nfilters(dcpl), 0);  // uncompressed: collective MPI-IO writes work

  const hid_t type = H5Dget_type(cube);
  EXPECT_GT(H5Tequal(type, H5T_STD_I16LE), 0);

  int version = 0;
  const hid_t attribute = H5Aopen(file, "format_version", H5P_DEFAULT);
  ASSERT_GE(H5Aread(attribute, H5T_NATIVE_INT, &version), 0);
  EXPECT_EQ(version, 1);
  EXPECT_GT(H5Aexists(file, "format"), 0);

  H5Aclose(attribute);
  H5Tclose(type);
  H5Pclose(dcpl);
  H5Dclose(cube);
  H5Fclose(file);
}

}  // namespace
}  // namespace hb::io
