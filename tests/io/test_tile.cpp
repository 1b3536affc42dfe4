#include <gtest/gtest.h>

#include <memory>

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

// A borrowed tile (rows of a loaded image, perhaps in a GPU's memory) is never copied
// through the host: its copies borrow the same bytes on the same device, and a reshape
// takes host memory of its own.
TEST(TileTest, CopiesOfABorrowedTileBorrowTooAndAReshapeOwnsItsMemory) {
  const auto rows = std::make_shared<std::byte[]>(4 * 7 * 5 * 2);
  Tile borrowed;
  borrowed.borrow(DataType::i16, 7, 5, {2, 6}, {3, 5}, rows, 3);
  EXPECT_EQ(borrowed.device(), 3);
  const Tile copy = borrowed;
  EXPECT_EQ(copy.bytes().data(), rows.get());
  EXPECT_EQ(copy.device(), 3);
  EXPECT_EQ(copy.core(), (RowRange{3, 5}));
  borrowed.reshape(DataType::i16, 7, 5, {2, 6}, {3, 5});
  EXPECT_NE(borrowed.bytes().data(), rows.get());
  EXPECT_EQ(borrowed.device(), -1);
}

}  // namespace hb::io
