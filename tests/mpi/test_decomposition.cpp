// The rank seams under real MPI ranks (1-4): balanced row blocks, the tree sum of
// moments (the same bits whatever the split over ranks), and failure agreement.
#include <gtest/gtest.h>

#include <cmath>

#include "mpi/agree.hpp"
#include "mpi/comm.hpp"
#include "mpi/decomposition.hpp"
#include "src/mnf/pipeline_ranks.hpp"

namespace hb {
namespace {

TEST(BalancedCuts, EqualWeightsSplitEvenly) {
  const std::vector<double> weights(12, 1.0);
  EXPECT_EQ(mpi::balanced_cuts(weights, 3), (std::vector<std::int64_t>{0, 4, 8, 12}));
  EXPECT_EQ(mpi::balanced_cuts(weights, 1), (std::vector<std::int64_t>{0, 12}));
}

TEST(BalancedCuts, HeavyTilesGetTheirOwnBlocks) {
  // Two heavy tiles among light ones: each of 2 parts gets one heavy tile, weight 12 each.
  const std::vector<double> weights{10, 1, 1, 1, 10, 1};
  const auto cuts = mpi::balanced_cuts(weights, 2);
  EXPECT_EQ(cuts, (std::vector<std::int64_t>{0, 3, 6}));
}

TEST(BalancedCuts, MorePartsThanTilesLeavesEmptyBlocks) {
  const std::vector<double> weights{1, 1};
  const auto cuts = mpi::balanced_cuts(weights, 4);
  ASSERT_EQ(cuts.size(), 5u);
  EXPECT_EQ(cuts.front(), 0);
  EXPECT_EQ(cuts.back(), 2);
  EXPECT_EQ(mpi::max_tiles(cuts), 1);
  const mpi::TileGrid grid{10, 5};
  int empty = 0;
  for (int p = 0; p < 4; ++p) empty += mpi::block_of(grid, cuts, p).empty() ? 1 : 0;
  EXPECT_EQ(empty, 2);
}

TEST(CutsByValidPixels, FillTilesWeighOnlyTheirRead) {
  // 4 tiles of 2 rows x 10 samples; the last two rows hold no valid pixel.
  const mpi::TileGrid grid{8, 2};
  const std::vector<std::int64_t> rows{10, 10, 10, 10, 10, 10, 0, 0};
  const auto tiles = mpi::tile_sums(grid, rows);
  EXPECT_EQ(tiles, (std::vector<std::int64_t>{20, 20, 20, 0}));
  // Weights 22.5, 22.5, 22.5, 2.5: the second part starts at the half, 35.
  EXPECT_EQ(mpi::cuts_by_valid_pixels(grid, tiles, 10, 2), (std::vector<std::int64_t>{0, 2, 4}));
}

TEST(BalanceRows, AtLeastEightUnitsPerRank) {
  EXPECT_EQ(mpi::balance_rows(120, 1000, 2), 8);   // ceil(120 / 16)
  EXPECT_EQ(mpi::balance_rows(120, 4, 2), 4);      // the work tile is finer already
  EXPECT_EQ(mpi::balance_rows(120, 1000, 2, 64), 64);
}

// Moments of "row" r: values that make float addition order visible.
mnf::Moments row_moments(std::int64_t r, const std::vector<double>& shift) {
  auto m = mnf::Moments::zero(shift);
  m.count = 3;
  for (std::size_t i = 0; i < m.sum.size(); ++i) m.sum[i] = std::sin(0.37 * static_cast<double>(r) + static_cast<double>(i)) * 1e3 + 0.1;
  for (std::size_t i = 0; i < m.cross.size(); ++i) m.cross[i] = std::cos(1.3 * static_cast<double>(r) + static_cast<double>(i)) * 1e7 / 3;
  return m;
}

TEST(TreeSum, SameBitsForAnySplitOverRanks) {
  const auto world = mpi::Comm::world();
  const std::vector<double> shift{1.5, -2.0, 3.25};
  constexpr std::int64_t kRows = 37;
  // Serial reference on this rank alone.
  mnf::TreeSum serial(shift);
  for (std::int64_t r = 0; r < kRows; ++r) ASSERT_TRUE(serial.push(r, row_moments(r, shift)).ok());
  auto expected = serial.total(mpi::Comm::self());
  ASSERT_TRUE(expected.ok());
  // Uneven blocks, the last rank's empty when there are several.
  const int ranks = world.size();
  const int workers = ranks > 1 ? ranks - 1 : 1;
  const std::int64_t begin = world.rank() < workers ? kRows * world.rank() * world.rank() / (workers * workers) : kRows;
  const std::int64_t end =
      world.rank() < workers ? kRows * (world.rank() + 1) * (world.rank() + 1) / (workers * workers) : kRows;
  mnf::TreeSum mine(shift);
  for (std::int64_t r = begin; r < end; ++r) ASSERT_TRUE(mine.push(r, row_moments(r, shift)).ok());
  auto total = mine.total(world);
  ASSERT_TRUE(total.ok());
  EXPECT_EQ(total->count, 3 * kRows);
  EXPECT_EQ(total->sum, expected->sum);      // bitwise
  EXPECT_EQ(total->cross, expected->cross);  // bitwise
  // And it is the sum, to rounding.
  double plain = 0;
  for (std::int64_t r = 0; r < kRows; ++r) plain += row_moments(r, shift).sum[1];
  EXPECT_NEAR(total->sum[1], plain, 1e-9 * std::abs(plain) + 1e-9);
}

TEST(Agree, OneRankFailingFailsEveryRankWithItsCause) {
  const auto world = mpi::Comm::world();
  const int last = world.size() - 1;
  const Status local = world.rank() == last ? Status{io_error("scene.img", "cannot read rows")} : Status{};
  const Status agreed = mpi::agree(local, world);
  ASSERT_FALSE(agreed.ok());
  EXPECT_EQ(agreed.error().kind, ErrorKind::io);
  if (world.rank() != last) {
    EXPECT_NE(agreed.error().message.find("rank " + std::to_string(last) + " ("), std::string::npos);
    EXPECT_NE(agreed.error().message.find("cannot read rows"), std::string::npos);
  }
  EXPECT_TRUE(mpi::agree(Status{}, world).ok());
}

}  // namespace
}  // namespace hb
