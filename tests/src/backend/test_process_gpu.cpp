// process_gpu(): the GPU a factory uses when it is handed none. The one rank binding
// chose; before binding, the launcher's node-local rank modulo the visible GPUs (0
// without a GPU, as in CI).
#include <gtest/gtest.h>

#include <cstdlib>

#include "src/backend/backend.hpp"

namespace hb {
namespace {

class ProcessGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kLaunchers) unsetenv(name);
    set_process_gpu(kProcessGpu);
  }
  void TearDown() override { SetUp(); }
  static constexpr const char* kLaunchers[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"};
};

TEST_F(ProcessGpu, FollowsEachLaunchersLocalRankModuloTheGpus) {
  const int gpus = cuda_device_count();
  EXPECT_EQ(process_gpu(), 0);
  for (const char* name : kLaunchers) {
    setenv(name, "3", 1);
    EXPECT_EQ(process_gpu(), gpus > 0 ? 3 % gpus : 0) << name;
    unsetenv(name);
  }
}

TEST_F(ProcessGpu, TheBoundDeviceWinsOverTheLauncher) {
  setenv("SLURM_LOCALID", "3", 1);
  set_process_gpu(2);
  EXPECT_EQ(process_gpu(), 2);
}

}  // namespace
}  // namespace hb
