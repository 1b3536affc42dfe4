// Collective HDF5 cube I/O: ranks write disjoint, uneven row blocks of one file (one
// rank with none) and read them back collectively; the file holds the same data as one
// written by a single rank. Failures on one rank reach every rank instead of hanging.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "../io/test_hdf5_support.hpp"
#include "io/hdf5_cube.hpp"
#include "mpi/comm.hpp"

namespace hb::io {
namespace {

using testing::expect_same_metadata;
using testing::full_metadata;
using testing::make_info;
using testing::pattern_rows;

// A scratch directory named by rank 0, shared by every rank (all on one host).
class SharedScratch {
 public:
  explicit SharedScratch(const mpi::Comm& comm) : comm_(comm) {
    std::string name;
    if (comm.is_root()) {
      std::string pattern = (std::filesystem::temp_directory_path() / "hb_mpi_XXXXXX").string();
      name = ::mkdtemp(pattern.data());
    }
    std::uint64_t size = name.size();
    MPI_Bcast(&size, 1, MPI_UINT64_T, 0, comm.handle());
    name.resize(size);
    MPI_Bcast(name.data(), static_cast<int>(size), MPI_CHAR, 0, comm.handle());
    path_ = name;
  }
  ~SharedScratch() {
    comm_.barrier();
    if (comm_.is_root()) std::filesystem::remove_all(path_);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::size_t entry_count() const {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(path_),
                                                  std::filesystem::directory_iterator()));
  }

 private:
  const mpi::Comm& comm_;
  std::filesystem::path path_;
};

// Uneven blocks: rank i of the first `workers` ranks gets a share proportional to i + 1;
// with several ranks the last one gets no rows at all.
RowRange block_of(int rank, int size, std::int64_t lines, bool last_rank_idle) {
  const int workers = (size > 1 && last_rank_idle) ? size - 1 : size;
  if (rank >= workers) return {lines, lines};
  const std::int64_t total_weight = std::int64_t{workers} * (workers + 1) / 2;
  auto cut = [&](int r) { return lines * (std::int64_t{r} * (r + 1) / 2) / total_weight; };
  return {cut(rank), cut(rank + 1)};
}

// The `call`-th piece of `block`, `rows_per_call` rows at a time; empty past its end.
RowRange piece(RowRange block, std::int64_t call, std::int64_t rows_per_call) {
  const std::int64_t begin = std::min(block.end, block.begin + call * rows_per_call);
  return {begin, std::min(block.end, begin + rows_per_call)};
}

// Every rank makes the same number of collective calls: enough for the largest block.
std::int64_t calls_needed(int size, std::int64_t lines, std::int64_t rows_per_call, bool idle) {
  std::int64_t largest = 0;
  for (int r = 0; r < size; ++r) largest = std::max(largest, block_of(r, size, lines, idle).rows());
  return (largest + rows_per_call - 1) / rows_per_call;
}

class Hdf5ParallelTest : public ::testing::Test {
 protected:
  mpi::Comm world_ = mpi::Comm::world();
  SharedScratch scratch_{world_};
  // 128 KiB rows, 16-row chunks: blocks of 5-row writes straddle chunk boundaries.
  CubeInfo info_ = make_info(DataType::f32, {50, 512, 64}, full_metadata(64));
  static constexpr std::int64_t kRowsPerCall = 5;

  Status write_blocks(CubeWriter& writer, bool skip_last_row_of_rank0 = false) {
    const RowRange block = block_of(world_.rank(), world_.size(), info_.shape.lines, true);
    const auto calls = calls_needed(world_.size(), info_.shape.lines, kRowsPerCall, true);
    for (std::int64_t call = 0; call < calls; ++call) {
      RowRange rows = piece(block, call, kRowsPerCall);
      if (skip_last_row_of_rank0 && world_.is_root() && rows.end == block.end && !rows.empty())
        rows.end -= 1;
      HB_TRY(writer.write_rows(rows, pattern_rows(info_, rows)));
    }
    return {};
  }
};

TEST_F(Hdf5ParallelTest, CollectiveWriteAndReadMatchASingleRankFile) {
  const auto parallel_path = scratch_.file("parallel.h5");
  {
    auto writer = create_hdf5_cube(parallel_path, info_, &world_);
    ASSERT_TRUE(writer.ok()) << writer.error().line();
    const auto written = write_blocks(**writer);
    EXPECT_TRUE(written.ok()) << written.error().line();
    const auto committed = (*writer)->commit();
    ASSERT_TRUE(committed.ok()) << committed.error().line();
  }

  // Read back collectively with a different uneven split (first rank idle when several).
  auto cube = open_hdf5_cube(parallel_path, &world_);
  ASSERT_TRUE(cube.ok()) << cube.error().line();
  expect_same_metadata((*cube)->info().meta, info_.meta);
  const int mirrored = world_.size() - 1 - world_.rank();
  const RowRange block = block_of(mirrored, world_.size(), info_.shape.lines, true);
  const auto calls = calls_needed(world_.size(), info_.shape.lines, 7, true);
  for (std::int64_t call = 0; call < calls; ++call) {
    const RowRange rows = piece(block, call, 7);
    std::vector<std::byte> out(static_cast<std::size_t>(rows.rows() * info_.bytes_per_row()));
    const auto read = (*cube)->read_rows(rows, out);
    EXPECT_TRUE(read.ok()) << read.error().line();
    EXPECT_EQ(out, pattern_rows(info_, rows)) << "rows " << rows.begin << ".." << rows.end;
  }

  // Rank 0 alone writes the same scene with the serial driver; both files agree.
  if (world_.is_root()) {
    const auto serial_path = scratch_.file("serial.h5");
    testing::write_pattern(serial_path, info_, 50);
    auto serial = open_hdf5_cube(serial_path, nullptr);
    auto parallel = open_hdf5_cube(parallel_path, nullptr);
    ASSERT_TRUE(serial.ok() && parallel.ok());
    std::vector<std::byte> a(static_cast<std::size_t>(info_.total_bytes())), b(a.size());
    ASSERT_TRUE((*serial)->read_rows({0, 50}, a).ok());
    ASSERT_TRUE((*parallel)->read_rows({0, 50}, b).ok());
    EXPECT_EQ(a, b);
    EXPECT_EQ((*parallel)->info().shape, (*serial)->info().shape);
    expect_same_metadata((*parallel)->info().meta, (*serial)->info().meta);
  }
}

TEST_F(Hdf5ParallelTest, UncommittedWriterLeavesNoFile) {
  {
    auto writer = create_hdf5_cube(scratch_.file("abandoned.h5"), info_, &world_);
    ASSERT_TRUE(writer.ok()) << writer.error().line();
    EXPECT_TRUE(write_blocks(**writer).ok());
  }
  world_.barrier();
  if (world_.is_root()) {
    EXPECT_EQ(scratch_.entry_count(), 0u);
  }
}

TEST_F(Hdf5ParallelTest, CommitFailsOnEveryRankWhenOneRankMissedARow) {
  {
    auto writer = create_hdf5_cube(scratch_.file("partial.h5"), info_, &world_);
    ASSERT_TRUE(writer.ok()) << writer.error().line();
    EXPECT_TRUE(write_blocks(**writer, true).ok());
    EXPECT_FALSE((*writer)->commit().ok());
  }
  world_.barrier();
  if (world_.is_root()) {
    EXPECT_EQ(scratch_.entry_count(), 0u);
  }
}

TEST_F(Hdf5ParallelTest, BadRequestOnOneRankFailsEveryRankInsteadOfHanging) {
  auto writer = create_hdf5_cube(scratch_.file("bad.h5"), info_, &world_);
  ASSERT_TRUE(writer.ok()) << writer.error().line();
  const RowRange rows{0, 1};
  const std::size_t bytes = static_cast<std::size_t>(info_.bytes_per_row()) + (world_.is_root() ? 1 : 0);
  const auto written = (*writer)->write_rows(world_.is_root() ? rows : RowRange{},
                                            std::vector<std::byte>(world_.is_root() ? bytes : 0));
  EXPECT_FALSE(written.ok());
}

}  // namespace
}  // namespace hb::io
