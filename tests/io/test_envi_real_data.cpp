// The ENVI reader and writer on the real scenes in the shared data folder: known
// values from each header, and copies through our writer that Spectral Python reads
// back identical. Skips when the shared data is absent.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "io/envi_cube.hpp"
#include "tests/io/envi_test_support.hpp"

namespace hb::io {
namespace {

std::string shared(const std::string& relative) { return std::string(HB_SHARED_DATA) + "/" + relative; }

#define REQUIRE_SHARED(relative)                                                             \
  if (!std::filesystem::exists(shared(relative))) GTEST_SKIP() << "shared data absent: " << shared(relative)

EnviHeader read_ok(const std::string& path) {
  auto header = read_envi_header(path);
  EXPECT_TRUE(header.ok()) << (header.ok() ? "" : header.error().line());
  return header.ok() ? *header : EnviHeader{};
}

TEST(EnviRealData, EveryRealHeaderParsesAndItsDataFileHasTheRightSize) {
  if (!std::filesystem::exists(HB_SHARED_DATA)) GTEST_SKIP() << "shared data absent: " << HB_SHARED_DATA;
  int headers = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(HB_SHARED_DATA)) {
    if (entry.path().extension() != ".hdr") continue;
    ++headers;
    auto cube = open_envi_cube(entry.path().string());
    ASSERT_TRUE(cube.ok()) << cube.error().line();
    // Formatting then parsing reproduces every field.
    const auto header = read_ok(entry.path().string());
    auto again = parse_envi_header(format_envi_header(header), "formatted.hdr");
    ASSERT_TRUE(again.ok()) << again.error().line();
    EXPECT_EQ(again->info.shape, header.info.shape);
    EXPECT_EQ(again->info.meta.wavelength, header.info.meta.wavelength);
    EXPECT_EQ(again->info.meta.band_names, header.info.meta.band_names);
    EXPECT_EQ(again->info.meta.class_names, header.info.meta.class_names);
    EXPECT_EQ(again->info.meta.spectra_names, header.info.meta.spectra_names);
    EXPECT_EQ(again->info.meta.description, header.info.meta.description);
  }
  EXPECT_GE(headers, 8);
}

TEST(EnviRealData, JasperRidgeIsBipInt16With198Bands) {
  REQUIRE_SHARED("jasper_ridge/jasper_ridge.hdr");
  const auto h = read_ok(shared("jasper_ridge/jasper_ridge.hdr"));
  EXPECT_EQ(h.info.shape, (CubeShape{100, 100, 198}));
  EXPECT_EQ(h.info.type, DataType::i16);
  EXPECT_EQ(h.interleave, Interleave::bip);
  EXPECT_EQ(h.byte_order, ByteOrder::little);
  ASSERT_EQ(h.info.meta.band_names.size(), 198u);
  EXPECT_EQ(h.info.meta.band_names.front(), "AVIRIS channel 4");
  EXPECT_EQ(h.info.meta.band_names.back(), "AVIRIS channel 219");
  EXPECT_TRUE(h.info.meta.wavelength.empty());
}

TEST(EnviRealData, UsgsLibraryHas498SpectraOf224ChannelsInMicrometres) {
  REQUIRE_SHARED("usgs_library/usgs_1995_aviris224.hdr");
  const auto h = read_ok(shared("usgs_library/usgs_1995_aviris224.hdr"));
  EXPECT_EQ(h.info.shape, (CubeShape{498, 224, 1}));
  EXPECT_EQ(h.info.type, DataType::f32);
  EXPECT_EQ(h.info.meta.file_type, "ENVI Spectral Library");
  EXPECT_EQ(h.info.meta.wavelength_units, "Micrometers");
  ASSERT_EQ(h.info.meta.wavelength.size(), 224u);
  EXPECT_EQ(h.info.meta.wavelength.front(), 0.38315);
  EXPECT_EQ(h.info.meta.wavelength[32], 0.6643);  // the first spectrometer overlap steps back
  EXPECT_EQ(h.info.meta.fwhm.size(), 224u);
  ASSERT_EQ(h.info.meta.spectra_names.size(), 498u);
  EXPECT_EQ(h.info.meta.spectra_names.front(), "Acmite NMNH133746");
  EXPECT_EQ(h.info.meta.spectra_names.back(), "Walnut_Leaf SUN (Green)");
}

TEST(EnviRealData, KscClassMapIs512LinesBy614SamplesWith14NamedClasses) {
  REQUIRE_SHARED("ksc/ksc_gt.hdr");
  const auto h = read_ok(shared("ksc/ksc_gt.hdr"));
  EXPECT_EQ(h.info.shape, (CubeShape{512, 614, 1}));
  EXPECT_EQ(h.info.type, DataType::u8);
  EXPECT_EQ(h.info.meta.file_type, "ENVI Classification");
  EXPECT_EQ(h.info.meta.classes, 14);
  ASSERT_EQ(h.info.meta.class_names.size(), 14u);
  EXPECT_EQ(h.info.meta.class_names[0], "Unclassified");
  EXPECT_EQ(h.info.meta.class_names[4], "Cabbage palm/oak hammock");
  EXPECT_EQ(h.info.meta.class_names[13], "Water");
  EXPECT_EQ(h.info.meta.class_lookup.size(), 42u);
}

// Copies a scene through our writer (optionally to another interleave and byte order)
// and asks Spectral Python whether the copy holds the same array and metadata.
void expect_spectral_python_reads_copy_identically(const std::string& original, Interleave interleave,
                                                   ByteOrder order) {
  auto cube = open_envi_cube(original);
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  const auto& info = (*cube)->info();
  test::TempDir dir;
  const std::string copy = dir.file("copy.hdr");
  auto writer = create_envi_cube(copy, info, interleave, order);
  ASSERT_TRUE(writer.ok()) << writer.error().line();
  std::vector<std::byte> rows(static_cast<std::size_t>(7 * info.bytes_per_row()));
  for (std::int64_t r0 = 0; r0 < info.shape.lines; r0 += 7) {
    const RowRange range{r0, std::min(info.shape.lines, r0 + 7)};
    const std::span<std::byte> chunk(rows.data(), static_cast<std::size_t>(range.rows() * info.bytes_per_row()));
    ASSERT_TRUE((*cube)->read_rows(range, chunk).ok());
    ASSERT_TRUE((*writer)->write_rows(range, chunk).ok());
  }
  ASSERT_TRUE((*writer)->commit().ok());
  const std::string command = std::string(HB_PYTHON_EXE) + " " + std::string(HB_TEST_SOURCE_DIR) + "/envi_oracle.py compare '" +
                              original + "' '" + copy + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

TEST(EnviRealData, SpectralPythonReadsOurCopyOfJasperRidgeAsBsqBigEndian) {
  REQUIRE_SHARED("jasper_ridge/jasper_ridge.hdr");
  expect_spectral_python_reads_copy_identically(shared("jasper_ridge/jasper_ridge.hdr"), Interleave::bsq,
                                                ByteOrder::big);
}

TEST(EnviRealData, SpectralPythonReadsOurCopyOfTheUsgsLibrary) {
  REQUIRE_SHARED("usgs_library/usgs_1995_aviris224.hdr");
  expect_spectral_python_reads_copy_identically(shared("usgs_library/usgs_1995_aviris224.hdr"), Interleave::bsq,
                                                ByteOrder::little);
}

TEST(EnviRealData, SpectralPythonReadsOurCopyOfTheKscClassMap) {
  REQUIRE_SHARED("ksc/ksc_gt.hdr");
  expect_spectral_python_reads_copy_identically(shared("ksc/ksc_gt.hdr"), Interleave::bil, ByteOrder::little);
}

}  // namespace
}  // namespace hb::io
