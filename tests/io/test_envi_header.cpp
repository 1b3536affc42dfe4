// ENVI header parsing and formatting on hand-written headers: the syntax rules,
// every field, the checks against bands/samples/lines/classes, and round trips.
#include <gtest/gtest.h>

#include <sstream>

#include "io/envi_header.hpp"
#include "tests/io/envi_test_support.hpp"

namespace hb::io {
namespace {

EnviHeader parse_ok(const std::string& text) {
  auto header = parse_envi_header(text, "t.hdr");
  EXPECT_TRUE(header.ok()) << (header.ok() ? "" : header.error().line());
  return header.ok() ? *header : EnviHeader{};
}

TEST(EnviHeaderParse, MinimalHeaderGetsDocumentedDefaults) {
  const auto h = parse_ok(test::header_text(3, 4, 5, 2));
  EXPECT_EQ(h.info.shape, (CubeShape{3, 4, 5}));
  EXPECT_EQ(h.info.type, DataType::i16);
  EXPECT_EQ(h.interleave, Interleave::bsq);
  EXPECT_EQ(h.byte_order, ByteOrder::little);
  EXPECT_EQ(h.header_offset, 0);
  EXPECT_EQ(h.info.meta.file_type, "ENVI Standard");
  EXPECT_EQ(h.info.meta.envi_interleave, Interleave::bsq);
  EXPECT_EQ(h.info.meta.envi_byte_order, ByteOrder::little);
  EXPECT_TRUE(h.info.meta.extra.empty());
}

TEST(EnviHeaderParse, KeysIgnoreCaseAndSpacingAndCommentsAreSkipped) {
  const auto h = parse_ok(
      "ENVI\r\n; a comment = with an equals sign\r\nSAMPLES=7\r\n  Lines   =  2 \r\nBands = 3\r\n"
      "Data  Type = 12\r\nHEADER    offset = 128\r\nInterleave = BIL\r\nByte Order = 1\r\n"
      "a line without an equals sign\r\n");
  EXPECT_EQ(h.info.shape, (CubeShape{2, 7, 3}));
  EXPECT_EQ(h.info.type, DataType::u16);
  EXPECT_EQ(h.header_offset, 128);
  EXPECT_EQ(h.interleave, Interleave::bil);
  EXPECT_EQ(h.byte_order, ByteOrder::big);
  EXPECT_EQ(h.info.meta.envi_byte_order, ByteOrder::big);
}

TEST(EnviHeaderParse, CarriageReturnsAloneEndLinesAsInGdal) {
  const auto h = parse_ok("ENVI\rsamples = 4\rlines = 3\rbands = 2\rdata type = 2\rfile type = ENVI Standard\r");
  EXPECT_EQ(h.info.shape, (CubeShape{3, 4, 2}));
  EXPECT_EQ(h.info.meta.file_type, "ENVI Standard");
}

TEST(EnviHeaderParse, EverySupportedDataTypeCode) {
  for (int code : {1, 2, 3, 4, 5, 12, 13, 14, 15}) {
    const auto h = parse_ok(test::header_text(1, 1, 1, code));
    EXPECT_EQ(static_cast<int>(h.info.type), code);
  }
}

TEST(EnviHeaderParse, ListsSpanLinesAndKeepSemicolonsInsideBraces) {
  const auto h = parse_ok(test::header_text(2, 2, 3, 4,
                                            "description = {first line;\n ; not a comment\n last}\n"
                                            "wavelength = {400.5,\n  500,\n 6.5e2 }\n"
                                            "fwhm = {10, 10.25, 1e1}\nbbl = {1, 0.0, 1.0}\n"
                                            "band names = {Band one, second band,\n third}\n"
                                            "wavelength units = Nanometers\ndata ignore value = -9999\n"
                                            "map info = {UTM, 1.000, 1.000, 5.5e5, 4.2e6, 30, 30, 10, North}\n"
                                            "coordinate system string = {PROJCS[\"x\",GEOGCS[\"y\"]]}\n"));
  const auto& m = h.info.meta;
  EXPECT_EQ(m.description, "first line;\n ; not a comment\n last");
  EXPECT_EQ(m.wavelength, (std::vector<double>{400.5, 500, 650}));
  EXPECT_EQ(m.fwhm, (std::vector<double>{10, 10.25, 10}));
  EXPECT_EQ(m.bbl, (std::vector<int>{1, 0, 1}));
  EXPECT_FALSE(m.band_is_good(1));
  EXPECT_EQ(m.band_names, (std::vector<std::string>{"Band one", "second band", "third"}));
  EXPECT_EQ(m.wavelength_units, "Nanometers");
  EXPECT_EQ(m.data_ignore_value, -9999.0);
  EXPECT_EQ(m.map_info, "UTM, 1.000, 1.000, 5.5e5, 4.2e6, 30, 30, 10, North");
  EXPECT_EQ(m.coordinate_system_string, "PROJCS[\"x\",GEOGCS[\"y\"]]");
}

TEST(EnviHeaderParse, ClassificationFieldsAreCheckedAgainstClasses) {
  const auto h = parse_ok(test::header_text(2, 3, 1, 1,
                                            "file type = ENVI Classification\nclasses = 3\n"
                                            "class lookup = {0, 0, 0, 255, 0, 0,\n 0, 255, 0}\n"
                                            "class names = {Unclassified, Red, Green}\n"));
  EXPECT_EQ(h.info.meta.classes, 3);
  EXPECT_EQ(h.info.meta.class_lookup, (std::vector<int>{0, 0, 0, 255, 0, 0, 0, 255, 0}));
  EXPECT_EQ(h.info.meta.class_names, (std::vector<std::string>{"Unclassified", "Red", "Green"}));
}

TEST(EnviHeaderParse, SpectralLibraryListsFollowSamplesAndLines) {
  const auto h = parse_ok(test::header_text(2, 3, 1, 4,
                                            "file type = ENVI Spectral Library\nwavelength = {0.4, 0.5, 0.6}\n"
                                            "spectra names = {Quartz, Calcite}\n"));
  EXPECT_EQ(h.info.meta.wavelength.size(), 3u);
  EXPECT_EQ(h.info.meta.spectra_names, (std::vector<std::string>{"Quartz", "Calcite"}));
  // The same wavelength list against bands = 1 is an error for a standard file.
  EXPECT_FALSE(parse_envi_header(test::header_text(2, 3, 1, 4, "wavelength = {0.4, 0.5, 0.6}\n"), "t.hdr").ok());
}

TEST(EnviHeaderParse, UnknownKeysAreKeptInOrderAndTheLastDuplicateWins) {
  const auto h = parse_ok(test::header_text(1, 1, 1, 1,
                                            "Sensor Type = AVIRIS\ndefault bands = {29, 19,\n 9}\n"
                                            "samples = 1\nsensor type = Unknown\nacquisition time = 2001-01-01T10:00\n"));
  using KV = std::pair<std::string, std::string>;
  EXPECT_EQ(h.info.meta.extra, (std::vector<KV>{{"sensor type", "Unknown"},
                                                {"default bands", "{29, 19,\n 9}"},
                                                {"acquisition time", "2001-01-01T10:00"}}));
}

TEST(EnviHeaderFormat, EveryFieldAndUnknownKeySurvivesFormatThenParse) {
  EnviHeader h;
  h.info.shape = {5, 4, 3};
  h.info.type = DataType::f64;
  h.header_offset = 512;
  h.interleave = Interleave::bil;
  h.byte_order = ByteOrder::big;
  auto& m = h.info.meta;
  m.description = "a scene";
  m.wavelength = {0.1, 1.0 / 3.0, 2.5e-300};  // need 17 significant digits to round-trip
  m.fwhm = {1e-3, 2e-3, 3.000000000000001e-3};
  m.wavelength_units = "Micrometers";
  m.data_ignore_value = -1.0e34;
  m.bbl = {1, 0, 1};
  m.band_names = {"b 1", "b 2", "b 3"};
  m.map_info = "UTM, 1, 1, 500000.5, 4100000.25, 30, 30, 11, North, WGS-84";
  m.coordinate_system_string = "PROJCS[\"WGS_1984_UTM_Zone_11N\"]";
  m.classes = 2;
  m.class_lookup = {0, 0, 0, 10, 20, 30};
  m.class_names = {"none", "thing"};
  m.extra = {{"sensor type", "AVIRIS"}, {"default bands", "{3, 2, 1}"}};

  const auto back = parse_ok(format_envi_header(h));
  EXPECT_EQ(back.info.shape, h.info.shape);
  EXPECT_EQ(back.info.type, h.info.type);
  EXPECT_EQ(back.header_offset, 512);
  EXPECT_EQ(back.interleave, Interleave::bil);
  EXPECT_EQ(back.byte_order, ByteOrder::big);
  const auto& b = back.info.meta;
  EXPECT_EQ(b.description, m.description);
  EXPECT_EQ(b.wavelength, m.wavelength);  // exact, not approximate
  EXPECT_EQ(b.fwhm, m.fwhm);
  EXPECT_EQ(b.wavelength_units, m.wavelength_units);
  EXPECT_EQ(b.data_ignore_value, m.data_ignore_value);
  EXPECT_EQ(b.bbl, m.bbl);
  EXPECT_EQ(b.band_names, m.band_names);
  EXPECT_EQ(b.map_info, m.map_info);
  EXPECT_EQ(b.coordinate_system_string, m.coordinate_system_string);
  EXPECT_EQ(b.classes, m.classes);
  EXPECT_EQ(b.class_lookup, m.class_lookup);
  EXPECT_EQ(b.class_names, m.class_names);
  EXPECT_EQ(b.extra, m.extra);
}

TEST(EnviHeaderFormat, LongListsAreWrappedAndSeparatorsInNamesAreReplaced) {
  EnviHeader h;
  h.info.shape = {1, 1, 300};
  h.info.type = DataType::i16;
  for (int b = 0; b < 300; ++b) h.info.meta.wavelength.push_back(400.0 + b * 3.3);
  h.info.meta.band_names.assign(300, "name, with comma {and braces}");
  const std::string text = format_envi_header(h);
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) EXPECT_LE(line.size(), 100u) << line;
  const auto back = parse_ok(text);
  EXPECT_EQ(back.info.meta.wavelength, h.info.meta.wavelength);
  ASSERT_EQ(back.info.meta.band_names.size(), 300u);
  EXPECT_EQ(back.info.meta.band_names[7], "name; with comma (and braces)");
}

// The fuzzer's seeds (and the inputs it once failed on) without needing clang: each
// parses and formats to a fixed point, or fails as bad input naming the file.
TEST(EnviHeaderFormat, FuzzSeedsParseToAFixedPointOrFailCleanly) {
  int seeds = 0;
  for (const auto& entry : std::filesystem::directory_iterator(HB_FUZZ_CORPUS)) {
    ++seeds;
    const std::string path = entry.path().string();
    auto header = parse_envi_header(test::read_file(path), path);
    if (!header.ok()) {
      EXPECT_EQ(header.error().kind, ErrorKind::bad_input) << header.error().line();
      EXPECT_EQ(header.error().file, path);
      continue;
    }
    const std::string formatted = format_envi_header(*header);
    auto again = parse_envi_header(formatted, path);
    ASSERT_TRUE(again.ok()) << path << ": " << again.error().line() << "\n" << formatted;
    EXPECT_EQ(again->info.shape, header->info.shape) << path;
    EXPECT_EQ(again->info.meta.file_type, header->info.meta.file_type) << path;
    EXPECT_EQ(format_envi_header(*again), formatted) << path;
  }
  EXPECT_GE(seeds, 5);
}

TEST(EnviPaths, HeaderFindsItsDataFileAndDataFileFindsItsHeader) {
  test::TempDir dir;
  test::write_file(dir.file("a.hdr"), "");
  test::write_file(dir.file("a.img"), "");
  test::write_file(dir.file("b.sli"), "");
  test::write_file(dir.file("b.hdr"), "");
  test::write_file(dir.file("c.dat"), "");
  test::write_file(dir.file("c.dat.hdr"), "");

  auto a = resolve_envi_paths(dir.file("a.hdr"));
  ASSERT_TRUE(a.ok()) << a.error().line();
  EXPECT_EQ(a->data, dir.file("a.img"));
  auto a_from_data = resolve_envi_paths(dir.file("a.img"));
  ASSERT_TRUE(a_from_data.ok());
  EXPECT_EQ(a_from_data->header, dir.file("a.hdr"));
  auto b = resolve_envi_paths(dir.file("b.hdr"));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->data, dir.file("b.sli"));
  auto c = resolve_envi_paths(dir.file("c.dat"));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->header, dir.file("c.dat.hdr"));
}

}  // namespace
}  // namespace hb::io
