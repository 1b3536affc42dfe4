// Shared helpers for the HDF5 cube tests: a scratch directory, a scene description with
// every metadata field set, and a reproducible pixel pattern (the same formula is used
// by test_hdf5_h5py_check.py).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "io/cube.hpp"
#include "tests/support/scratch_dir.hpp"

namespace hb::io::testing {

// A scratch directory per test (tests/support/scratch_dir.hpp).
struct ScratchDir : hb::test::ScratchDir {
  ScratchDir() : hb::test::ScratchDir("hb_hdf5") {}
};

inline const std::vector<DataType>& all_data_types() {
  static const std::vector<DataType> types{DataType::u8,  DataType::i16, DataType::i32,
                                           DataType::f32, DataType::f64, DataType::u16,
                                           DataType::u32, DataType::i64, DataType::u64};
  return types;
}

// Every field set, strings with the characters ENVI headers make awkward.
inline Metadata full_metadata(std::int64_t bands) {
  Metadata meta;
  meta.description = "Scene {with braces}, commas, = signs; and \"quotes\"";
  meta.file_type = "ENVI Standard";
  for (std::int64_t b = 0; b < bands; ++b) {
    meta.wavelength.push_back(400.1 + 0.1 * static_cast<double>(b) + 0.2);
    meta.fwhm.push_back(9.75 + 1e-9 * static_cast<double>(b));
    meta.bbl.push_back(b % 3 == 1 ? 0 : 1);
    meta.band_names.push_back(b == 1 ? "" : "Band " + std::to_string(b) + ", {nm}");
  }
  meta.wavelength_units = "Nanometers";
  meta.data_ignore_value = -9999.5;
  meta.map_info = "UTM, 1.000, 1.000, 500000.0, 4000000.0, 3.0e+01, 3.0e+01, 13, North, WGS-84";
  meta.coordinate_system_string = "PROJCS[\"WGS_1984_UTM_Zone_13N\",GEOGCS[\"GCS_WGS_1984\"]]";
  meta.classes = 3;
  meta.class_names = {"Unclassified", "Water, deep", "{Vegetation}"};
  meta.class_lookup = {0, 0, 0, 0, 0, 255, 0, 255, 0};
  meta.spectra_names = {"alunite GDS84", "kaolinite, CM9"};
  meta.extra = {{"sensor type", "AVIRIS"},
                {"reflectance scale factor", "10000"},
                {"acquisition time", "{2001-06-19, 12:00}"},
                {"sensor type", "duplicate keys keep their order"}};
  meta.source_file = "/data/f970619t01p02_r02_sc01.a.rfl";
  meta.envi_interleave = Interleave::bil;
  meta.envi_byte_order = ByteOrder::big;
  return meta;
}

inline CubeInfo make_info(DataType type, CubeShape shape, Metadata meta = {}) {
  CubeInfo info;
  info.type = type;
  info.shape = shape;
  info.meta = std::move(meta);
  return info;
}

// Pixel (row, sample, band): a small pattern that fits every type, shifted negative for
// signed types and fractional for floats; the first and last samples of the scene hold
// the type's lowest and highest values.
template <class T>
T pattern_value(const CubeShape& shape, std::int64_t row, std::int64_t sample, std::int64_t band) {
  if (row == 0 && sample == 0 && band == 0) return std::numeric_limits<T>::lowest();
  if (row == shape.lines - 1 && sample == shape.samples - 1 && band == shape.bands - 1)
    return std::numeric_limits<T>::max();
  const auto base = static_cast<double>((row * 1009 + sample * 31 + band * 7) % 211);
  if constexpr (std::is_floating_point_v<T>) return static_cast<T>(base * 0.25 - 20.0);
  if constexpr (std::is_signed_v<T>) return static_cast<T>(base - 105.0);
  return static_cast<T>(base);
}

inline std::vector<std::byte> pattern_rows(const CubeInfo& info, RowRange rows) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(rows.rows() * info.bytes_per_row()));
  visit_data_type(info.type, [&](auto zero) {
    using T = decltype(zero);
    auto* out = reinterpret_cast<T*>(bytes.data());
    for (std::int64_t r = rows.begin; r < rows.end; ++r)
      for (std::int64_t s = 0; s < info.shape.samples; ++s)
        for (std::int64_t b = 0; b < info.shape.bands; ++b)
          *out++ = pattern_value<T>(info.shape, r, s, b);
  });
  return bytes;
}

// Writes the pattern `rows_per_write` rows at a time and commits.
inline void write_pattern(const std::string& path, const CubeInfo& info, std::int64_t rows_per_write) {
  auto writer = create_cube(path, info);
  ASSERT_TRUE(writer.ok()) << writer.error().line();
  for (std::int64_t r = 0; r < info.shape.lines; r += rows_per_write) {
    const RowRange rows{r, std::min(info.shape.lines, r + rows_per_write)};
    const auto bytes = pattern_rows(info, rows);
    ASSERT_TRUE((*writer)->write_rows(rows, bytes).ok());
  }
  const auto committed = (*writer)->commit();
  ASSERT_TRUE(committed.ok()) << committed.error().line();
}

inline void expect_same_metadata(const Metadata& got, const Metadata& want) {
  EXPECT_EQ(got.description, want.description);
  EXPECT_EQ(got.file_type, want.file_type);
  EXPECT_EQ(got.wavelength, want.wavelength);  // exact: float64 stored as float64
  EXPECT_EQ(got.fwhm, want.fwhm);
  EXPECT_EQ(got.wavelength_units, want.wavelength_units);
  EXPECT_EQ(got.data_ignore_value, want.data_ignore_value);
  EXPECT_EQ(got.bbl, want.bbl);
  EXPECT_EQ(got.band_names, want.band_names);
  EXPECT_EQ(got.map_info, want.map_info);
  EXPECT_EQ(got.coordinate_system_string, want.coordinate_system_string);
  EXPECT_EQ(got.classes, want.classes);
  EXPECT_EQ(got.class_names, want.class_names);
  EXPECT_EQ(got.class_lookup, want.class_lookup);
  EXPECT_EQ(got.spectra_names, want.spectra_names);
  EXPECT_EQ(got.extra, want.extra);
  EXPECT_EQ(got.source_file, want.source_file);
  EXPECT_EQ(got.envi_interleave, want.envi_interleave);
  EXPECT_EQ(got.envi_byte_order, want.envi_byte_order);
}

}  // namespace hb::io::testing
