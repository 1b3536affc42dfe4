// h5py, an independent reader and writer, agrees with hyperbatch on the HDF5 cube:
// same shape, dtype, pixels and attribute values, both ways.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>

#include "io/hdf5_layout.hpp"
#include "test_hdf5_support.hpp"

namespace hb::io {
namespace {

using testing::full_metadata;
using testing::make_info;
using testing::ScratchDir;
using testing::write_pattern;

// Runs the h5py script; returns its exit status (77: h5py missing).
int run_h5py(const std::string& arguments) {
  const std::string command = std::string(HB_PYTHON) + " " + HB_H5PY_CHECK + " " + arguments;
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class Hdf5H5pyTest : public ::testing::TestWithParam<DataType> {};

TEST_P(Hdf5H5pyTest, H5pyReadsShapeDtypePixelsAndAttributes) {
  ScratchDir dir;
  const auto info = make_info(GetParam(), {40, 300, 12}, full_metadata(12));
  const auto path = dir.file("cube.h5");
  write_pattern(path, info, 9);
  const auto chunk = h5::chunk_shape(info);
  const int status = run_h5py("check " + path + " " + std::string(data_type_name(info.type)) +
                              " 40 300 12 " + std::to_string(chunk[0]));
  if (status == 77) GTEST_SKIP() << "h5py is not installed for " << HB_PYTHON;
  EXPECT_EQ(status, 0);
}

INSTANTIATE_TEST_SUITE_P(SomeTypes, Hdf5H5pyTest,
                         ::testing::Values(DataType::u8, DataType::i16, DataType::u16, DataType::f32,
                                           DataType::f64, DataType::i64),
                         [](const auto& param) { return std::string(data_type_name(param.param)); });

TEST(Hdf5H5py, ReadsACubeWrittenTheH5pyWay) {
  ScratchDir dir;
  const auto path = dir.file("from_h5py.h5");
  const int status = run_h5py("write " + path);
  if (status == 77) GTEST_SKIP() << "h5py is not installed for " << HB_PYTHON;
  ASSERT_EQ(status, 0);

  auto cube = open_cube(path);
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  const auto& info = (*cube)->info();
  EXPECT_EQ(info.type, DataType::u16);
  EXPECT_EQ(info.shape, (CubeShape{4, 3, 2}));
  EXPECT_EQ(info.meta.wavelength, (std::vector<double>{450.0, 550.0}));
  EXPECT_EQ(info.meta.band_names, (std::vector<std::string>{"blue", "green"}));
  EXPECT_EQ(info.meta.classes, 5);
  EXPECT_EQ(info.meta.data_ignore_value, -9999.0);
  EXPECT_EQ(info.meta.bbl, (std::vector<int>{1, 0}));
  EXPECT_EQ(info.meta.description, "written by h5py");
  EXPECT_EQ(info.meta.map_info, "UTM, 1");
  EXPECT_EQ(info.meta.envi_interleave, Interleave::bsq);
  EXPECT_EQ(info.meta.file_type, "ENVI Standard");

  std::vector<std::byte> all(static_cast<std::size_t>(info.total_bytes()));
  ASSERT_TRUE((*cube)->read_rows({0, 4}, all).ok());
  EXPECT_EQ(all, testing::pattern_rows(info, {0, 4}));
}

}  // namespace
}  // namespace hb::io
