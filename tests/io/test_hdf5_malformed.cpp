// Malformed HDF5 cubes are bad_input naming the file and the dataset or attribute.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>
#include <fstream>
#include <functional>

#include "io/hdf5_cube.hpp"
#include "test_hdf5_support.hpp"

namespace hb::io {
namespace {

using testing::make_info;
using testing::ScratchDir;
using testing::write_pattern;

// Builds a file from scratch with the HDF5 C API.
void build_file(const std::string& path, const std::function<void(hid_t)>& build) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  build(file);
  H5Fclose(file);
}

void add_dataset(hid_t where, const char* name, std::vector<hsize_t> dims, hid_t type) {
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t dataset = H5Dcreate2(where, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dclose(dataset);
  H5Sclose(space);
}

void add_string_attribute(hid_t object, const char* name, const char* value) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attribute = H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(attribute, type, &value);
  H5Aclose(attribute);
  H5Sclose(space);
  H5Tclose(type);
}

void add_numeric_attribute(hid_t object, const char* name, std::vector<hsize_t> dims, hid_t type,
                           const void* values) {
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t attribute = H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(attribute, type, values);
  H5Aclose(attribute);
  H5Sclose(space);
}

// A valid cube written by hyperbatch, then `edit` applied to (file, /cube) in place.
void edit_valid_cube(const std::string& path, const std::function<void(hid_t, hid_t)>& edit) {
  write_pattern(path, make_info(DataType::i16, {3, 4, 2}, testing::full_metadata(2)), 3);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t cube = H5Dopen2(file, "cube", H5P_DEFAULT);
  edit(file, cube);
  H5Dclose(cube);
  H5Fclose(file);
}

void replace_with_string(hid_t object, const char* name, const char* value) {
  H5Adelete(object, name);
  add_string_attribute(object, name, value);
}

void expect_bad_input(const std::string& path, const std::string& field) {
  auto cube = open_cube(path);
  ASSERT_FALSE(cube.ok()) << "opened a malformed file";
  EXPECT_EQ(cube.error().kind, ErrorKind::bad_input) << cube.error().line();
  EXPECT_EQ(cube.error().file, path);
  EXPECT_EQ(cube.error().field, field) << cube.error().line();
  EXPECT_NE(cube.error().line().find(path), std::string::npos);
}

class Hdf5MalformedTest : public ::testing::Test {
 protected:
  ScratchDir dir_;
  std::string path_ = dir_.file("bad.h5");
};

TEST_F(Hdf5MalformedTest, MissingFileIsAnIoError) {
  auto cube = open_cube(path_);
  ASSERT_FALSE(cube.ok());
  EXPECT_EQ(cube.error().kind, ErrorKind::io);
  EXPECT_EQ(cube.error().file, path_);
}

TEST_F(Hdf5MalformedTest, NotAnHdf5File) {
  std::ofstream(path_) << "ENVI\nsamples = 3\n";
  expect_bad_input(path_, "signature");
}

TEST_F(Hdf5MalformedTest, TruncatedFile) {
  write_pattern(path_, make_info(DataType::f32, {64, 64, 16}), 64);
  std::filesystem::resize_file(path_, std::filesystem::file_size(path_) / 2);
  expect_bad_input(path_, "superblock");
}

TEST_F(Hdf5MalformedTest, MissingCubeDataset) {
  build_file(path_, [](hid_t file) { add_dataset(file, "data", {2, 3, 4}, H5T_NATIVE_FLOAT); });
  expect_bad_input(path_, "/cube");
}

TEST_F(Hdf5MalformedTest, CubeIsAGroup) {
  build_file(path_, [](hid_t file) {
    H5Gclose(H5Gcreate2(file, "cube", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  });
  expect_bad_input(path_, "/cube");
}

TEST_F(Hdf5MalformedTest, WrongRank) {
  build_file(path_, [](hid_t file) { add_dataset(file, "cube", {6, 4}, H5T_NATIVE_FLOAT); });
  expect_bad_input(path_, "/cube");
}

TEST_F(Hdf5MalformedTest, UnsupportedElementType) {
  build_file(path_, [](hid_t file) { add_dataset(file, "cube", {2, 3, 4}, H5T_NATIVE_INT8); });
  expect_bad_input(path_, "/cube");
}

TEST_F(Hdf5MalformedTest, WavelengthAsString) {
  edit_valid_cube(path_, [](hid_t, hid_t cube) { replace_with_string(cube, "wavelength", "400, 410"); });
  expect_bad_input(path_, "wavelength");
}

TEST_F(Hdf5MalformedTest, ClassesAsFloat) {
  edit_valid_cube(path_, [](hid_t, hid_t cube) {
    H5Adelete(cube, "classes");
    const double value = 2.5;
    add_numeric_attribute(cube, "classes", {1}, H5T_NATIVE_DOUBLE, &value);
  });
  expect_bad_input(path_, "classes");
}

TEST_F(Hdf5MalformedTest, BandNamesAsNumbers) {
  edit_valid_cube(path_, [](hid_t, hid_t cube) {
    H5Adelete(cube, "band_names");
    const int values[2] = {1, 2};
    add_numeric_attribute(cube, "band_names", {2}, H5T_NATIVE_INT, values);
  });
  expect_bad_input(path_, "band_names");
}

TEST_F(Hdf5MalformedTest, TwoDimensionalWavelength) {
  edit_valid_cube(path_, [](hid_t, hid_t cube) {
    H5Adelete(cube, "wavelength");
    const double values[4] = {1, 2, 3, 4};
    add_numeric_attribute(cube, "wavelength", {2, 2}, H5T_NATIVE_DOUBLE, values);
  });
  expect_bad_input(path_, "wavelength");
}

TEST_F(Hdf5MalformedTest, DataIgnoreValueWithTwoValues) {
  edit_valid_cube(path_, [](hid_t, hid_t cube) {
    H5Adelete(cube, "data_ignore_value");
    const double values[2] = {0, 1};
    add_numeric_attribute(cube, "data_ignore_value", {2}, H5T_NATIVE_DOUBLE, values);
  });
  expect_bad_input(path_, "data_ignore_value");
}

TEST_F(Hdf5MalformedTest, UnknownInterleave) {
  edit_valid_cube(path_, [](hid_t, hid_t cube) { replace_with_string(cube, "envi_interleave", "bsx"); });
  expect_bad_input(path_, "envi_interleave");
}

TEST_F(Hdf5MalformedTest, ByteOrderOutOfRange) {
  edit_valid_cube(path_, [](hid_t, hid_t cube) {
    H5Adelete(cube, "envi_byte_order");
    const int value = 2;
    add_numeric_attribute(cube, "envi_byte_order", {1}, H5T_NATIVE_INT, &value);
  });
  expect_bad_input(path_, "envi_byte_order");
}

TEST_F(Hdf5MalformedTest, ExtraKeysAndValuesDiffer) {
  edit_valid_cube(path_, [](hid_t, hid_t cube) { replace_with_string(cube, "extra_values", "one"); });
  expect_bad_input(path_, "extra_values");
}

TEST_F(Hdf5MalformedTest, OtherFormatMarker) {
  edit_valid_cube(path_, [](hid_t file, hid_t) { replace_with_string(file, "format", "netcdf"); });
  expect_bad_input(path_, "format");
}

TEST_F(Hdf5MalformedTest, NewerFormatVersion) {
  edit_valid_cube(path_, [](hid_t file, hid_t) {
    H5Adelete(file, "format_version");
    const int value = 2;
    add_numeric_attribute(file, "format_version", {1}, H5T_NATIVE_INT, &value);
  });
  expect_bad_input(path_, "format_version");
}

}  // namespace
}  // namespace hb::io
