#include <gtest/gtest.h>

#include "io/tile.hpp"

namespace hb::io {

TEST(RowRangeTest, HaloIsClippedAtSceneEdges) {
  EXPECT_EQ(with_halo({0, 4}, 2, 10), (RowRange{0, 6}));
  EXPECT_EQ(with_halo({8, 10}, 2, 10), (RowRange{6, 10}));
  EXPECT_EQ(with_halo({3, 5}, 1, 10), (RowRange{2, 6}));
}

TEST(TileTest, SizesItsBufferFromTypeAndRows) {
  Tile tile(DataType::i16, 7, 5, {2, 6}, {3, 5});
  EXPECT_EQ(tile.bytes().size(), 4u * 7 * 5 * 2);
  EXPECT_EQ(tile.as<std::int16_t>().size(), 4u * 7 * 5);
  EXPECT_EQ(tile.offset(3, 1), (1 * 7 + 1) * 5);
}

}  // namespace hb::io
