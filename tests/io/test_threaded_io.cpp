// The I/O that runs on extra threads: large reads split over several preads, and the
// write-behind that writes one row block while the next is computed. Both must give
// exactly the bytes of the serial path, and report failures. Also the worker pool the
// split reads and parallel loops run on.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "io/cube.hpp"
#include "src/base/parallel_for.hpp"
#include "src/base/worker_pool.hpp"
#include "io/posix_file.hpp"
#include "io/tile_reader.hpp"
#include "io/write_behind.hpp"
#include "tests/support/scratch_dir.hpp"

namespace hb::io {
namespace {

std::vector<std::byte> pattern(std::size_t bytes) {
  std::vector<std::byte> data(bytes);
  std::uint32_t x = 12345;
  for (auto& b : data) {
    x = x * 1664525u + 1013904223u;
    b = static_cast<std::byte>(x >> 24);
  }
  return data;
}

TEST(ParallelRead, LargeUnalignedReadsEqualTheFileBytes) {
  const test::ScratchDir dir("hb_threaded_io");
  const auto data = pattern((std::size_t{41} << 20) + 777);  // every thread gets a piece, and a ragged end
  const auto path = dir.file("big.bin");
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  auto file = PosixFile::open_read(path);
  ASSERT_TRUE(file.ok()) << file.error().line();
  for (const std::size_t offset : {std::size_t{0}, std::size_t{3}, std::size_t{1} << 20}) {
    std::vector<std::byte> out(data.size() - offset - 5);
    ASSERT_TRUE(file->read_at(static_cast<std::int64_t>(offset), out).ok());
    ASSERT_TRUE(std::equal(out.begin(), out.end(), data.begin() + static_cast<std::ptrdiff_t>(offset)))
        << "offset " << offset;
  }
}

TEST(ParallelRead, ReadPastTheEndIsAnError) {
  const test::ScratchDir dir("hb_threaded_io");
  const auto data = pattern(std::size_t{20} << 20);
  const auto path = dir.file("short.bin");
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size()));
  auto file = PosixFile::open_read(path);
  ASSERT_TRUE(file.ok());
  std::vector<std::byte> out(data.size());
  const Status read = file->read_at(4096, out);  // the last piece runs off the end
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().line().find("unexpected end of file"), std::string::npos) << read.error().line();
}

// Rows written through the write-behind, in the background or not, read back equal.
void round_trip(bool background, const std::string& path) {
  CubeInfo info;
  info.shape = {37, 11, 3};
  info.type = DataType::f32;
  {
    auto writer = create_cube(path, info);
    ASSERT_TRUE(writer.ok()) << writer.error().line();
    WriteBehind behind(**writer, background);
    double waited = 0;
    for (std::int64_t r0 = 0; r0 < info.shape.lines; r0 += 5) {
      const RowRange rows{r0, std::min<std::int64_t>(r0 + 5, info.shape.lines)};
      auto out = behind.next_buffer(static_cast<std::size_t>(rows.rows() * 11 * 3));
      std::iota(out.begin(), out.end(), static_cast<float>(r0 * 33));
      ASSERT_TRUE(behind.write(rows, waited).ok());
    }
    ASSERT_TRUE(behind.finish(waited).ok());
    ASSERT_TRUE((*writer)->commit().ok());
  }
  auto cube = open_cube(path);
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  std::vector<float> all(static_cast<std::size_t>(37 * 33));
  ASSERT_TRUE((*cube)->read_rows({0, 37}, std::as_writable_bytes(std::span<float>(all))).ok());
  for (std::size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], static_cast<float>(i)) << i;
}

TEST(WriteBehind, BackgroundAndForegroundWritesReadBackEqual) {
  const test::ScratchDir dir("hb_threaded_io");
  round_trip(true, dir.file("behind.hdr"));
  round_trip(false, dir.file("inline.hdr"));
  round_trip(true, dir.file("behind.h5"));
}

// Tiles read ahead on the reader's thread (1 MiB and more) each hold their rows when
// returned, while the next one is being read into the other buffer.
TEST(TileReader, EveryTileHoldsItsRowsWhileTheNextIsReadAhead) {
  const test::ScratchDir dir("hb_threaded_io");
  const auto path = dir.file("tiles.hdr");
  CubeInfo info;
  info.shape = {64, 512, 256};  // a row of 512 KiB: tiles of 4 rows are read ahead
  info.type = DataType::f32;
  const auto row_floats = static_cast<std::size_t>(512 * 256);
  {
    auto writer = create_cube(path, info);
    ASSERT_TRUE(writer.ok()) << writer.error().line();
    std::vector<float> rows(row_floats * 64);
    std::iota(rows.begin(), rows.end(), 0.0f);
    ASSERT_TRUE((*writer)->write_rows({0, 64}, std::as_bytes(std::span<const float>(rows))).ok());
    ASSERT_TRUE((*writer)->commit().ok());
  }
  auto cube = open_cube(path);
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  std::vector<RowRange> tiles;
  for (std::int64_t r = 0; r < 64; r += 4) tiles.push_back({r, r + 4});
  TileReader reader(**cube, tiles, 0);
  std::size_t got = 0;
  const auto holds = [&](const Tile& tile, RowRange rows) {
    if (tile.held() != rows) return false;
    const auto floats = std::span(reinterpret_cast<const float*>(tile.bytes().data()), tile.bytes().size() / 4);
    const auto first = static_cast<float>(static_cast<std::size_t>(rows.begin) * row_floats);
    for (std::size_t i = 0; i < floats.size(); ++i)
      if (floats[i] != first + static_cast<float>(i)) return false;
    return true;
  };
  for (;;) {
    auto tile = reader.next();
    ASSERT_TRUE(tile.ok()) << tile.error().line();
    if (*tile == nullptr) break;
    ASSERT_TRUE(holds(**tile, tiles[got])) << "tile " << got;
    ++got;
  }
  EXPECT_EQ(got, tiles.size());
}

TEST(ParallelFor, CoversEveryIndexOnceInRangesOfAtLeastTheMinimum) {
  for (const std::int64_t n : {0, 1, 999, 1000, 123457}) {
    std::vector<int> hits(static_cast<std::size_t>(n), 0);
    std::vector<std::int64_t> sizes;
    std::mutex lock;
    parallel_for(n, 1000, [&](std::int64_t begin, std::int64_t end) {
      for (auto i = begin; i < end; ++i) ++hits[static_cast<std::size_t>(i)];
      const std::lock_guard guard(lock);
      sizes.push_back(end - begin);
    });
    EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; })) << n;
    for (const auto size : sizes) EXPECT_TRUE(size >= 1000 || sizes.size() == 1) << n;
  }
  EXPECT_GE(host_threads(), 1);
}

// Every piece runs exactly once, also when calls overlap from several threads and when a
// piece makes a call of its own (a queue no free thread serves must not hang).
TEST(WorkerPool, RunsEveryPieceOnceWhenCallsOverlapAndNest) {
  constexpr unsigned kPieces = 6, kInner = 5, kCallers = 4;
  std::vector<std::vector<int>> hits(kCallers, std::vector<int>(kPieces * kInner, 0));
  std::vector<std::thread> callers;
  for (unsigned c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < 20; ++round)
        run_pieces(kPieces, [&](unsigned p) { run_pieces(kInner, [&](unsigned i) { ++hits[c][p * kInner + i]; }); });
    });
  for (auto& t : callers) t.join();
  for (const auto& row : hits) EXPECT_TRUE(std::all_of(row.begin(), row.end(), [](int h) { return h == 20; }));
  int ran = 0;
  run_pieces(1, [&](unsigned) { ++ran; });
  run_pieces(0, [&](unsigned) { ++ran; });
  EXPECT_EQ(ran, 1);
}

// A piece that throws (the caller's or a worker's) reaches the caller once every other
// piece has run, and the pool serves the next call.
TEST(WorkerPool, APieceThatThrowsReachesTheCallerAfterTheOthersRan) {
  for (const unsigned thrower : {0u, 3u}) {
    std::vector<int> hits(6, 0);
    EXPECT_THROW(run_pieces(6,
                            [&](unsigned p) {
                              ++hits[p];
                              if (p == thrower) throw std::runtime_error("piece failed");
                            }),
                 std::runtime_error);
    EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; })) << thrower;
  }
  int ran = 0;
  std::mutex lock;
  run_pieces(4, [&](unsigned) {
    const std::lock_guard guard(lock);
    ++ran;
  });
  EXPECT_EQ(ran, 4);
}

}  // namespace
}  // namespace hb::io
