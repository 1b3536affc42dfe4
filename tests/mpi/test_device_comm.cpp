// mpi::DeviceComm under real ranks, one GPU each (CUDA builds; skips without a GPU of
// its own for every rank, as in CI): NCCL bootstrapped over MPI sums, broadcasts and
// passes a ring step on device buffers, with exact values.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "mpi/comm.hpp"
#include "mpi/device_comm.hpp"

namespace hb::mpi {
namespace {

// The PCI bus ids of every rank's device, in rank order ("" for none).
std::vector<std::string> bus_ids(const Comm& world, int device) {
  char id[32] = {};
  if (device >= 0 && cudaDeviceGetPCIBusId(id, sizeof(id), device) != cudaSuccess) id[0] = '\0';
  return world.allgather(std::string(id));
}

class DeviceCommTest : public ::testing::Test {
 protected:
  // Each rank takes the device of its local rank among those it sees: all of the host's,
  // or only its own (CUDA_VISIBLE_DEVICES narrowed per rank, as hyperbatch and srun
  // --gpu-bind do; NCCL then reaches GPUs the process cannot see).
  void SetUp() override {
    int devices = 0;
    const auto where = placement(world_);
    const int device = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0 ? where.local_rank % devices : -1;
    const auto ids = bus_ids(world_, device);
    const std::set<std::string> distinct(ids.begin(), ids.end());
    if (distinct.size() != ids.size() || distinct.count("") > 0) GTEST_SKIP() << "no CUDA device of its own for every rank";
    auto comm = DeviceComm::create(world_, device);
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
