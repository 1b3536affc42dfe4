// Writer then reader for every interleave x data type x byte order: the bytes read
// back equal the canonical source, and the bytes on disk equal a layout computed here
// independently from the ENVI definition of each interleave.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <thread>
#include <tuple>

#include "io/envi_cube.hpp"
#include "tests/io/envi_test_support.hpp"

namespace hb::io {
namespace {

constexpr CubeShape kShape{7, 5, 3};  // lines != samples != bands catches swapped axes

CubeInfo small_info(DataType type) {
  CubeInfo info;
  info.shape = kShape;
  info.type = type;
  info.meta.description = "round trip";
  info.meta.wavelength = {450.5, 550.25, 650.125};
  info.meta.wavelength_units = "Nanometers";
  return info;
}

// Writes the test cube with rows arriving out of order, and commits it; with
// `reserve_first`, the space of every row is reserved first, in two pieces.
void write_cube(const std::string& path, const CubeInfo& info, Interleave interleave, ByteOrder order,
                bool reserve_first = false) {
  auto writer = create_envi_cube(path, info, interleave, order);
  ASSERT_TRUE(writer.ok()) << writer.error().line();
  if (reserve_first) {
    ASSERT_TRUE((*writer)->reserve({4, 99}).ok());  // clipped to the cube's rows
    ASSERT_TRUE((*writer)->reserve({0, 4}).ok());
  }
  for (RowRange rows : {RowRange{3, 6}, RowRange{0, 1}, RowRange{6, 7}, RowRange{1, 3}})
    ASSERT_TRUE((*writer)->write_rows(rows, test::canonical_rows(info, rows.begin, rows.end)).ok());
  const Status committed = (*writer)->commit();
  ASSERT_TRUE(committed.ok()) << committed.error().line();
}

// The file bytes from the ENVI definitions: BSQ [band][line][sample], BIL
// [line][band][sample], BIP [line][sample][band]; big endian = most significant first.
std::vector<std::byte> expected_file_bytes(const CubeInfo& info, Interleave interleave, ByteOrder order) {
  const auto canonical = test::canonical_rows(info, 0, info.shape.lines);
  const auto [L, S, B] = std::tuple{info.shape.lines, info.shape.samples, info.shape.bands};
  const std::size_t n = bytes_per_sample(info.type);
  std::vector<std::byte> out(canonical.size());
  for (std::int64_t l = 0; l < L; ++l)
    for (std::int64_t s = 0; s < S; ++s)
      for (std::int64_t b = 0; b < B; ++b) {
        const std::int64_t index = interleave == Interleave::bsq   ? (b * L + l) * S + s
                                   : interleave == Interleave::bil ? (l * B + b) * S + s
                                                                   : (l * S + s) * B + b;
        const std::byte* from = canonical.data() + ((l * S + s) * B + b) * static_cast<std::int64_t>(n);
        std::byte* to = out.data() + index * static_cast<std::int64_t>(n);
        for (std::size_t k = 0; k < n; ++k) to[k] = from[order == native_byte_order() ? k : n - 1 - k];
      }
  return out;
}

using Case = std::tuple<Interleave, DataType, ByteOrder>;

class EnviRoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(EnviRoundTrip, ReadBackEqualsSourceAndDiskLayoutMatchesTheDefinition) {
  const auto [interleave, type, order] = GetParam();
  const CubeInfo info = small_info(type);
  test::TempDir dir;
  write_cube(dir.file("cube.hdr"), info, interleave, order);
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"cube.hdr", "cube.img"}));  // no temporaries left

  const std::string on_disk = test::read_file(dir.file("cube.img"));
  const auto expected = expected_file_bytes(info, interleave, order);
  ASSERT_EQ(on_disk.size(), expected.size());
  EXPECT_EQ(std::memcmp(on_disk.data(), expected.data(), expected.size()), 0);

  auto cube = open_envi_cube(dir.file("cube.hdr"));
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  EXPECT_EQ((*cube)->info().shape, kShape);
  EXPECT_EQ((*cube)->info().type, type);
  EXPECT_EQ((*cube)->info().meta.envi_interleave, interleave);
  EXPECT_EQ((*cube)->info().meta.envi_byte_order, order);
  EXPECT_EQ((*cube)->info().meta.wavelength, info.meta.wavelength);
  EXPECT_EQ((*cube)->bytes_on_disk(), static_cast<std::int64_t>(expected.size() + test::read_file(dir.file("cube.hdr")).size()));
  // Every row range, not just the whole cube.
  for (std::int64_t r0 = 0; r0 < kShape.lines; ++r0)
    for (std::int64_t r1 = r0 + 1; r1 <= kShape.lines; ++r1) {
      std::vector<std::byte> got(static_cast<std::size_t>((r1 - r0) * info.bytes_per_row()));
      ASSERT_TRUE((*cube)->read_rows({r0, r1}, got).ok());
      EXPECT_EQ(got, test::canonical_rows(info, r0, r1)) << "rows " << r0 << ".." << r1;
    }
}

TEST_P(EnviRoundTrip, SpaceReservedBeforeTheWritesChangesNoByte) {
  const auto [interleave, type, order] = GetParam();
  const CubeInfo info = small_info(type);
  test::TempDir dir;
  write_cube(dir.file("cube.hdr"), info, interleave, order, true);
  const std::string on_disk = test::read_file(dir.file("cube.img"));
  const auto expected = expected_file_bytes(info, interleave, order);
  ASSERT_EQ(on_disk.size(), expected.size());
  EXPECT_EQ(std::memcmp(on_disk.data(), expected.data(), expected.size()), 0);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  const auto [interleave, type, order] = info.param;
  return std::string(interleave_name(interleave)) + "_" + std::string(data_type_name(type)) +
         (order == ByteOrder::little ? "_le" : "_be");
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, EnviRoundTrip,
                         ::testing::Combine(::testing::Values(Interleave::bsq, Interleave::bil, Interleave::bip),
                                            ::testing::Values(DataType::u8, DataType::i16, DataType::i32,
                                                              DataType::f32, DataType::f64, DataType::u16,
                                                              DataType::u32, DataType::i64, DataType::u64),
                                            ::testing::Values(ByteOrder::little, ByteOrder::big)),
                         case_name);

TEST(EnviReader, TilesCarryHaloRowsClippedAtTheTopAndBottomEdges) {
  const CubeInfo info = small_info(DataType::i16);
  test::TempDir dir;
  write_cube(dir.file("cube.hdr"), info, Interleave::bsq, ByteOrder::big);
  auto cube = open_envi_cube(dir.file("cube.img"));  // by the data file's name
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  EXPECT_EQ((*cube)->path(), dir.file("cube.hdr"));
  struct Expect {
    RowRange core;
    std::int64_t halo;
    RowRange held;
  };
  for (const auto& e : {Expect{{0, 2}, 2, {0, 4}}, Expect{{5, 7}, 3, {2, 7}}, Expect{{3, 4}, 1, {2, 5}},
                        Expect{{0, 7}, 5, {0, 7}}}) {
    auto tile = (*cube)->read_tile(e.core, e.halo);
    ASSERT_TRUE(tile.ok()) << tile.error().line();
    EXPECT_EQ(tile->held(), e.held);
    EXPECT_EQ(tile->core(), e.core);
    const auto expected = test::canonical_rows(info, e.held.begin, e.held.end);
    EXPECT_TRUE(std::equal(expected.begin(), expected.end(), tile->bytes().begin(), tile->bytes().end()));
  }
}

TEST(EnviReader, HeaderOffsetIsSkipped) {
  const CubeInfo info = small_info(DataType::u16);
  test::TempDir dir;
  const auto bytes = expected_file_bytes(info, Interleave::bil, ByteOrder::big);
  test::write_file(dir.file("off.hdr"), test::header_text(7, 5, 3, 12, "header offset = 13\ninterleave = bil\nbyte order = 1\n"));
  test::write_file(dir.file("off.img"), std::string(13, 'x') + std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  auto cube = open_envi_cube(dir.file("off.hdr"));
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  std::vector<std::byte> got(static_cast<std::size_t>(info.total_bytes()));
  ASSERT_TRUE((*cube)->read_rows({0, 7}, got).ok());
  EXPECT_EQ(got, test::canonical_rows(info, 0, 7));
}

TEST(EnviReader, ConcurrentReadsFromOneCubeAgree) {
  const CubeInfo info = small_info(DataType::f32);
  test::TempDir dir;
  write_cube(dir.file("cube.hdr"), info, Interleave::bsq, ByteOrder::big);
  auto cube = open_envi_cube(dir.file("cube.hdr"));
  ASSERT_TRUE(cube.ok());
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const std::int64_t r0 = (t + i) % 7, r1 = std::min<std::int64_t>(7, r0 + 1 + i % 3);
        std::vector<std::byte> got(static_cast<std::size_t>((r1 - r0) * info.bytes_per_row()));
        if (!(*cube)->read_rows({r0, r1}, got).ok() || got != test::canonical_rows(info, r0, r1)) ++wrong[t];
      }
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong, (std::vector<int>{0, 0, 0, 0}));
}

TEST(EnviWriter, DataFileNameGivesHeaderBesideIt) {
  const CubeInfo info = small_info(DataType::u8);
  test::TempDir dir;
  write_cube(dir.file("scene.img"), info, Interleave::bip, ByteOrder::little);
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"scene.hdr", "scene.img"}));
}

TEST(EnviWriter, UncommittedWriterLeavesNothingBehind) {
  const CubeInfo info = small_info(DataType::i16);
  test::TempDir dir;
  {
    auto writer = create_envi_cube(dir.file("gone.hdr"), info, Interleave::bsq, ByteOrder::little);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->write_rows({0, 2}, test::canonical_rows(info, 0, 2)).ok());
    EXPECT_FALSE(dir.names().empty());  // the temporary data file exists meanwhile
  }
  EXPECT_TRUE(dir.names().empty());
}

// A BSQ file holds a row range as one extent a band: reserving half the rows allocates
// half of each band, and the file keeps its size.
TEST(EnviWriter, ReservingRowsAllocatesTheirExtentsAndKeepsTheFileSize) {
  CubeInfo info = small_info(DataType::f32);
  info.shape = {64, 256, 3};  // 1 KiB a band row
  info.meta.wavelength.clear();
  test::TempDir dir;
  auto writer = create_envi_cube(dir.file("big.hdr"), info, Interleave::bsq, ByteOrder::little);
  ASSERT_TRUE(writer.ok()) << writer.error().line();
  const auto names = dir.names();
  ASSERT_EQ(names.size(), 1u);  // the temporary data file
  const std::string data = dir.file(names.front());
  const auto allocated = [&] {
    struct stat st {};
    EXPECT_EQ(::stat(data.c_str(), &st), 0);
    EXPECT_EQ(st.st_size, info.total_bytes());
    return static_cast<std::int64_t>(st.st_blocks) * 512;
  };
  EXPECT_EQ(allocated(), 0);  // sized, not allocated
  ASSERT_TRUE((*writer)->reserve({0, 32}).ok());
  const std::int64_t half = allocated();
  if (half == 0) GTEST_SKIP() << "this file system does not allocate ahead (no fallocate): " << data;
  EXPECT_GE(half, 3 * 32 * 1024);
  EXPECT_LT(half, info.total_bytes());
  ASSERT_TRUE((*writer)->reserve({32, 64}).ok());
  EXPECT_GE(allocated(), info.total_bytes());
}

TEST(EnviWriter, CommitFailsUntilEveryRowIsWrittenAndRowsMayNotRepeat) {
  const CubeInfo info = small_info(DataType::f32);
  test::TempDir dir;
  {
    auto writer = create_envi_cube(dir.file("part.hdr"), info, Interleave::bil, ByteOrder::little);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->write_rows({0, 6}, test::canonical_rows(info, 0, 6)).ok());
    EXPECT_FALSE((*writer)->write_rows({5, 7}, test::canonical_rows(info, 5, 7)).ok());
    const Status early = (*writer)->commit();
    ASSERT_FALSE(early.ok());
    EXPECT_NE(early.error().message.find("6 of 7 rows"), std::string::npos) << early.error().line();
    EXPECT_FALSE(std::filesystem::exists(dir.file("part.hdr")));
    EXPECT_FALSE(std::filesystem::exists(dir.file("part.img")));
    ASSERT_TRUE((*writer)->write_rows({6, 7}, test::canonical_rows(info, 6, 7)).ok());
    ASSERT_TRUE((*writer)->commit().ok());
  }
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"part.hdr", "part.img"}));
}

TEST(EnviWriter, MetadataThatCannotBeWrittenConsistentlyIsRefusedUpFront) {
  CubeInfo info = small_info(DataType::f32);
  info.meta.wavelength.push_back(750);  // 4 wavelengths for 3 bands
  test::TempDir dir;
  auto writer = create_envi_cube(dir.file("bad.hdr"), info, Interleave::bsq, ByteOrder::little);
  ASSERT_FALSE(writer.ok());
  test::expect_error(writer.error(), ErrorKind::bad_input, dir.file("bad.hdr"), "wavelength");
  EXPECT_TRUE(dir.names().empty());
}

}  // namespace
}  // namespace hb::io
