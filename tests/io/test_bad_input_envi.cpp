// Malformed ENVI input, one case per test: each gives the documented error kind and
// names the file and the field at fault.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "io/envi_cube.hpp"
#include "tests/io/envi_test_support.hpp"

namespace hb::io {
namespace {

class EnviBadInput : public ::testing::Test {
 protected:
  // NAME.hdr with `header` and NAME.img of `data_bytes` bytes (none when negative).
  std::string scene(const std::string& name, const std::string& header, std::int64_t data_bytes) {
    test::write_file(dir_.file(name + ".hdr"), header);
    if (data_bytes >= 0) test::write_file(dir_.file(name + ".img"), std::string(static_cast<std::size_t>(data_bytes), '\1'));
    return dir_.file(name + ".hdr");
  }
  // Opens the scene and checks the error.
  void expect_open_error(const std::string& path, ErrorKind kind, const std::string& file, const std::string& field) {
    auto cube = open_envi_cube(path);
    ASSERT_FALSE(cube.ok()) << path << " opened";
    test::expect_error(cube.error(), kind, file, field);
  }
  test::TempDir dir_;
};

TEST_F(EnviBadInput, MissingRequiredField) {
  const auto hdr = scene("s", "ENVI\nsamples = 2\nlines = 2\ndata type = 1\n", 4);
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "bands");
}

TEST_F(EnviBadInput, UnknownDataType) {
  const auto hdr = scene("s", test::header_text(2, 2, 1, 7), 4);
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "data type");
}

TEST_F(EnviBadInput, ComplexDataTypeIsUnsupported) {
  const auto hdr = scene("s", test::header_text(2, 2, 1, 6), 32);
  auto cube = open_envi_cube(hdr);
  ASSERT_FALSE(cube.ok());
  test::expect_error(cube.error(), ErrorKind::bad_input, hdr, "data type");
  EXPECT_NE(cube.error().message.find("complex"), std::string::npos);
}

TEST_F(EnviBadInput, UnknownInterleave) {
  const auto hdr = scene("s", test::header_text(2, 2, 1, 1, "interleave = bsx\n"), 4);
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "interleave");
}

TEST_F(EnviBadInput, UnknownByteOrder) {
  const auto hdr = scene("s", test::header_text(2, 2, 1, 1, "byte order = 2\n"), 4);
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "byte order");
}

TEST_F(EnviBadInput, DataFileShorterThanHeaderSays) {
  const auto hdr = scene("s", test::header_text(2, 3, 4, 2), 2 * 3 * 4 * 2 - 1);
  expect_open_error(hdr, ErrorKind::bad_input, dir_.file("s.img"), "size");
  const auto message = open_envi_cube(hdr).error().message;
  EXPECT_NE(message.find("47 bytes, shorter than the 48"), std::string::npos) << message;
}

TEST_F(EnviBadInput, DataFileLongerThanHeaderSays) {
  const auto hdr = scene("s", test::header_text(2, 3, 4, 2, "header offset = 10\n"), 2 * 3 * 4 * 2 + 10 + 1);
  expect_open_error(hdr, ErrorKind::bad_input, dir_.file("s.img"), "size");
  const auto message = open_envi_cube(hdr).error().message;
  EXPECT_NE(message.find("59 bytes, longer than the 58"), std::string::npos) << message;
}

TEST_F(EnviBadInput, DimensionsOverflowing64Bits) {
  const auto hdr = scene("s", test::header_text(3037000500, 3037000500, 2, 4), 0);
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "lines * samples * bands");
}

TEST_F(EnviBadInput, OffsetPushingTheSizePast64Bits) {
  // lines * samples * bands * bytes fits, the header offset tips it over.
  const auto hdr = scene("s", test::header_text(1, 1, 1, 1, "header offset = 1099511627776\n"), 0);
  auto ok = open_envi_cube(hdr);  // 1 TiB offset is allowed by itself...
  ASSERT_FALSE(ok.ok());
  EXPECT_EQ(ok.error().field, "size");  // ...and fails only on the data file size
  const auto big = scene("b", test::header_text(4611686018427387903, 2, 1, 1, "header offset = 1099511627776\n"), 0);
  expect_open_error(big, ErrorKind::bad_input, big, "lines * samples * bands");
}

TEST_F(EnviBadInput, ImplausiblyManyBands) {
  // A scale factor is one gain a band: 22 G bands asked for 179 GB before this limit.
  const auto hdr = scene("s", test::header_text(1, 2, 22451222452, 4, "reflectance scale factor = 10000\n"), 0);
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "bands");
  EXPECT_NE(open_envi_cube(hdr).error().message.find("implausibly many (limit 1048576)"), std::string::npos);
  const auto most = scene("m", test::header_text(1, 1, 1 << 20, 1, "reflectance scale factor = 10000\n"), 1 << 20);
  EXPECT_TRUE(open_envi_cube(most).ok()) << open_envi_cube(most).error().line();
}

TEST_F(EnviBadInput, NegativeHeaderOffset) {
  const auto hdr = scene("s", test::header_text(2, 2, 1, 1, "header offset = -1\n"), 4);
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "header offset");
}

TEST_F(EnviBadInput, HugeHeaderOffset) {
  const auto hdr = scene("s", test::header_text(2, 2, 1, 1, "header offset = 9000000000000000000\n"), 4);
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "header offset");
}

TEST_F(EnviBadInput, WavelengthCountDiffersFromBands) {
  const auto hdr = scene("s", test::header_text(2, 2, 3, 1, "wavelength = {400, 500}\n"), 12);
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "wavelength");
  EXPECT_NE(open_envi_cube(hdr).error().message.find("has 2 items but bands = 3"), std::string::npos);
}

TEST_F(EnviBadInput, OtherListCountsDifferFromWhatTheyDescribe) {
  struct Case {
    std::string more;
    std::string field;
  };
  for (const auto& c : {Case{"fwhm = {1, 2}\n", "fwhm"}, Case{"bbl = {1, 0, 1, 1}\n", "bbl"},
                        Case{"band names = {a, b}\n", "band names"}, Case{"spectra names = {a}\n", "spectra names"},
                        Case{"classes = 2\nclass names = {a, b, c}\n", "class names"},
                        Case{"classes = 2\nclass lookup = {0, 0, 0}\n", "class lookup"},
                        Case{"class names = {a}\n", "class names"}, Case{"bbl = {1, 2, 1}\n", "bbl"}}) {
    const auto hdr = scene("s", test::header_text(2, 2, 3, 1, c.more), 12);
    expect_open_error(hdr, ErrorKind::bad_input, hdr, c.field);
  }
}

TEST_F(EnviBadInput, SpectralLibraryWavelengthsMustMatchSamples) {
  const auto hdr = scene("s", test::header_text(4, 3, 1, 4, "file type = ENVI Spectral Library\nwavelength = {1, 2, 3, 4}\n"), 48);
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "wavelength");
  EXPECT_NE(open_envi_cube(hdr).error().message.find("samples = 3"), std::string::npos);
}

TEST_F(EnviBadInput, NonNumericValues) {
  const auto hdr = scene("s", "ENVI\nsamples = two\nlines = 2\nbands = 1\ndata type = 1\n", 4);
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "samples");
  const auto list = scene("l", test::header_text(2, 2, 2, 1, "wavelength = {400, 5OO}\n"), 8);
  expect_open_error(list, ErrorKind::bad_input, list, "wavelength");
  const auto fraction = scene("f", test::header_text(2, 2, 2, 1, "lines = 2.5\n"), 8);
  expect_open_error(fraction, ErrorKind::bad_input, fraction, "lines");
}

TEST_F(EnviBadInput, ZeroDimension) {
  const auto hdr = scene("s", test::header_text(0, 2, 1, 1), 0);
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "lines");
}

TEST_F(EnviBadInput, UnterminatedList) {
  const auto hdr = scene("s", test::header_text(2, 2, 2, 1, "wavelength = {400,\n500\n"), 8);
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "wavelength");
}

TEST_F(EnviBadInput, BinaryGarbageInsteadOfAHeader) {
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage += static_cast<char>((i * 7919) % 256);
  const auto hdr = scene("s", garbage, 4);
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "ENVI");
}

TEST_F(EnviBadInput, BinaryBytesAfterAValidFirstLine) {
  const auto hdr = scene("s", test::header_text(2, 2, 1, 1) + std::string("junk = a\0b\n", 11), 4);
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "line 6");
}

TEST_F(EnviBadInput, HeaderLargerThan16MiB) {
  const auto hdr = scene("s", test::header_text(2, 2, 1, 1), 4);
  ASSERT_EQ(::truncate(hdr.c_str(), 17 << 20), 0);  // sparse: cheap to make
  expect_open_error(hdr, ErrorKind::bad_input, hdr, "ENVI");
}

TEST_F(EnviBadInput, MissingDataFile) {
  const auto hdr = scene("s", test::header_text(2, 2, 1, 1), -1);
  expect_open_error(hdr, ErrorKind::io, hdr, "");
  EXPECT_NE(open_envi_cube(hdr).error().message.find(dir_.file("s.img")), std::string::npos);
}

TEST_F(EnviBadInput, NoSuchHeader) {
  expect_open_error(dir_.file("absent.hdr"), ErrorKind::io, dir_.file("absent.hdr"), "");
  EXPECT_NE(open_envi_cube(dir_.file("absent.hdr")).error().message.find("No such file"), std::string::npos);
}

TEST_F(EnviBadInput, MissingHeaderForADataFile) {
  test::write_file(dir_.file("lonely.img"), "1234");
  expect_open_error(dir_.file("lonely.img"), ErrorKind::io, dir_.file("lonely.img"), "");
  EXPECT_NE(open_envi_cube(dir_.file("lonely.img")).error().message.find(dir_.file("lonely.hdr")), std::string::npos);
}

// chmod 000 does not stop root, and the tests run as root in CI: there the unreadable
// "file" is a directory standing where the header should be, which no one can read().
TEST_F(EnviBadInput, UnreadableHeader) {
  const std::string hdr = dir_.file("s.hdr");
  test::write_file(dir_.file("s.img"), std::string(4, '\0'));
  if (::geteuid() == 0) {
    std::filesystem::create_directory(hdr);
  } else {
    test::write_file(hdr, test::header_text(2, 2, 1, 1));
    ::chmod(hdr.c_str(), 0);
  }
  expect_open_error(hdr, ErrorKind::io, hdr, "");
}

TEST_F(EnviBadInput, UnreadableDataFile) {
  const std::string hdr = scene("s", test::header_text(2, 2, 1, 1), -1);
  const std::string img = dir_.file("s.img");
  if (::geteuid() == 0) {
    // resolve_envi_paths skips directories, so name the directory as the data file itself.
    std::filesystem::create_directory(dir_.file("d.raw"));
    test::write_file(dir_.file("d.raw.hdr"), test::header_text(2, 2, 1, 1));
    expect_open_error(dir_.file("d.raw"), ErrorKind::io, dir_.file("d.raw"), "");
  } else {
    test::write_file(img, std::string(4, '\0'));
    ::chmod(img.c_str(), 0);
    expect_open_error(hdr, ErrorKind::io, img, "");
  }
}

}  // namespace
}  // namespace hb::io
