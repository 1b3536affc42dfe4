// The CPU gather against the obvious loop, for pixel sizes of every sample type and band count.
#include <gtest/gtest.h>

#include "tests/src/ortho/gather_cases.hpp"

namespace hb::ortho {
namespace {

TEST(OrthoGather, CpuCopiesSourcePixelsAndFillsNoData) {
  auto gatherer = make_cpu_gatherer();
  for (std::int64_t pixel_bytes : {1, 2, 3, 4, 8, 12, 448, 900}) {
    auto c = test::make_gather_case(pixel_bytes, 10000, static_cast<std::uint32_t>(pixel_bytes));
    std::vector<std::byte> out(c.expected.size());
    ASSERT_TRUE(gatherer->gather(c.tile, out).ok());
    EXPECT_EQ(out, c.expected) << pixel_bytes << " bytes a pixel";
  }
}

}  // namespace
}  // namespace hb::ortho
