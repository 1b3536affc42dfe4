// TopK's unwritten lists (KnnSearch::makes_empty_lists): a resize to unwritten lists
// neither grows nor writes host memory, so lists voted on a device never take any; the
// first access grows them and reads empty lists, and rows_to_write hands out memory.
#include <gtest/gtest.h>

#include "src/knn/topk.hpp"

namespace hb::knn {
namespace {

TEST(TopK, UnwrittenListsTakeNoMemoryUntilTouched) {
  TopK lists(0, 16);
  lists.resize(1000, true);
  EXPECT_EQ(lists.queries(), 1000);
  EXPECT_TRUE(lists.unwritten());
  EXPECT_EQ(lists.allocated_pairs(), 0);
  EXPECT_EQ(lists.distances(999)[15], kNoDistance);  // grown and emptied on first read
  EXPECT_EQ(lists.indices(0)[0], kNoIndex);
  EXPECT_EQ(lists.allocated_pairs(), 1000 * 16);
  EXPECT_FALSE(lists.unwritten());
}

TEST(TopK, RowsToWriteGrowUnwrittenLists) {
  TopK lists(10, 4);
  lists.distances(3)[0] = 1.0f;
  lists.resize(50, true);  // larger than ever: nothing grown yet
  EXPECT_EQ(lists.allocated_pairs(), 10 * 4);
  auto [distances, indices] = lists.rows_to_write(49);
  distances[3] = 2.0f;
  indices[3] = 7;
  EXPECT_EQ(lists.allocated_pairs(), 50 * 4);
  EXPECT_FALSE(lists.unwritten());
  EXPECT_EQ(lists.distances(49)[3], 2.0f);
  EXPECT_EQ(lists.indices(49)[3], 7);
  lists.resize(60, true);
  lists.reset();  // an explicit reset grows and empties too
  EXPECT_EQ(lists.allocated_pairs(), 60 * 4);
  EXPECT_EQ(lists.distances(59)[3], kNoDistance);
}

}  // namespace
}  // namespace hb::knn
