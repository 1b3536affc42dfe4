// mpi::DeviceComm under real ranks, one GPU each (CUDA builds; skips without enough
// GPUs, as in CI): NCCL bootstrapped over MPI sums, broadcasts and passes a ring step
// on device buffers, with exact values.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "mpi/comm.hpp"
#include "mpi/device_comm.hpp"

namespace hb::mpi {
namespace {

class DeviceCommTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int devices = 0;
    const auto where = placement(world_);
    const bool enough = cudaGetDeviceCount(&devices) == cudaSuccess && devices > where.local_rank;
    if (world_.any(!enough)) GTEST_SKIP() << "no CUDA device for every rank";
    auto comm = DeviceComm::create(world_, where.local_rank);
    ASSERT_TRUE(comm.ok()) << comm.error().line();
    comm_ = std::move(*comm);
  }
  void TearDown() override {
    if (device_ != nullptr) cudaFree(device_);
  }
  double* upload(const std::vector<double>& host) {
    if (device_ == nullptr) cudaMalloc(&device_, 1 << 20);
    cudaMemcpy(device_, host.data(), host.size() * sizeof(double), cudaMemcpyHostToDevice);
    return device_;
  }
  std::vector<double> download(std::size_t n) const {
    std::vector<double> host(n);
    cudaMemcpy(host.data(), device_, n * sizeof(double), cudaMemcpyDeviceToHost);
    return host;
  }

  Comm world_ = Comm::world();
  std::unique_ptr<DeviceComm> comm_;
  double* device_ = nullptr;
};

TEST_F(DeviceCommTest, AllreduceSumsEveryRank) {
  const std::size_t n = 1000;
  double* d = upload(std::vector<double>(n, world_.rank() + 1.0));
  ASSERT_TRUE(comm_->allreduce_sum(d, n).ok());
  const double want = world_.size() * (world_.size() + 1) / 2.0;
  for (const double x : download(n)) ASSERT_EQ(x, want);
}

TEST_F(DeviceCommTest, BroadcastCopiesTheRootsValues) {
  std::vector<double> mine(64);
  std::iota(mine.begin(), mine.end(), 100.0 * world_.rank());
  double* d = upload(mine);
  ASSERT_TRUE(comm_->broadcast(d, mine.size(), 0).ok());
  std::vector<double> want(64);
  std::iota(want.begin(), want.end(), 0.0);
  EXPECT_EQ(download(64), want);
}

TEST_F(DeviceCommTest, RingStepBringsThePreviousRanksShard) {
  const int size = world_.size();
  const std::size_t n = 256;
  double* d = upload(std::vector<double>(n, static_cast<double>(world_.rank())));
  double* received = nullptr;
  ASSERT_EQ(cudaMalloc(&received, n * sizeof(double)), cudaSuccess);
  ASSERT_TRUE(comm_->exchange(d, n * sizeof(double), (world_.rank() + 1) % size, received, n * sizeof(double),
                              (world_.rank() - 1 + size) % size)
                  .ok());
  std::vector<double> host(n);
  cudaMemcpy(host.data(), received, n * sizeof(double), cudaMemcpyDeviceToHost);
  cudaFree(received);
  for (const double x : host) ASSERT_EQ(x, static_cast<double>((world_.rank() - 1 + size) % size));
}

}  // namespace
}  // namespace hb::mpi
