// Comm::allgather under real mpirun ranks (1-3): every rank's values, in rank order, on
// every rank, whatever their sizes (empty ones included).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mpi/comm.hpp"

namespace hb {
namespace {

// Rank r's lines: r of them ("r.0", "r.1", ...), so rank 0 sends none.
std::vector<std::string> lines_of(int rank) {
  std::vector<std::string> lines;
  for (int i = 0; i < rank; ++i) lines.push_back(std::to_string(rank) + "." + std::to_string(i));
  return lines;
}

TEST(CommAllgather, NumbersInRankOrder) {
  const auto world = mpi::Comm::world();
  const auto all = world.allgather(std::int64_t{10} * world.rank());
  ASSERT_EQ(static_cast<int>(all.size()), world.size());
  for (int r = 0; r < world.size(); ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], 10 * r);
}

TEST(CommAllgather, StringsOfEverySizeInRankOrder) {
  const auto world = mpi::Comm::world();
  const auto all = world.allgather(std::string(static_cast<std::size_t>(world.rank()), 'x'));
  ASSERT_EQ(static_cast<int>(all.size()), world.size());
  for (int r = 0; r < world.size(); ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], std::string(r, 'x'));
}

TEST(CommAllgather, ListsOfLinesInRankOrder) {
  const auto world = mpi::Comm::world();
  const auto all = world.allgather(lines_of(world.rank()));
  ASSERT_EQ(static_cast<int>(all.size()), world.size());
  for (int r = 0; r < world.size(); ++r) EXPECT_EQ(all[static_cast<std::size_t>(r)], lines_of(r));
}

}  // namespace
}  // namespace hb
