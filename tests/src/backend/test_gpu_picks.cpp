// each_rank_has_its_own_gpu(): rank binding's test of the GPUs the ranks of one host
// picked, as "host<TAB>PCI bus id". A launcher that shows each rank only its own GPU
// (srun --gpus-per-task --gpu-bind) makes every rank pick GPU 0 of what it sees: distinct
// bus ids mean distinct GPUs; the same id twice, or none, means ranks would share.
#include <gtest/gtest.h>

#include "src/backend/rank_backend.hpp"

namespace hb {
namespace {

TEST(GpuPicks, DistinctBusIdsAreOneGpuPerRank) {
  EXPECT_TRUE(each_rank_has_its_own_gpu({"n1\t00000000:18:00.0", "n1\t00000000:2A:00.0", "n1\t00000000:3A:00.0"}));
  EXPECT_TRUE(each_rank_has_its_own_gpu({"n1\t00000000:18:00.0"}));
}

TEST(GpuPicks, TheSameGpuTwiceOrNoneIsNot) {
  EXPECT_FALSE(each_rank_has_its_own_gpu({"n1\t00000000:18:00.0", "n1\t00000000:18:00.0"}));
  EXPECT_FALSE(each_rank_has_its_own_gpu({"n1\t00000000:18:00.0", "n1\t"}));
  EXPECT_FALSE(each_rank_has_its_own_gpu({"n1\t"}));
}

}  // namespace
}  // namespace hb
