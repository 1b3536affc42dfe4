// One rank, one GPU, for everything a rank runs (CUDA builds; skips without a GPU per
// rank, as in CI): after rank binding, the KNN search and vote and SAM's scorer created
// without a device work on the rank's own GPU. They once took GPU 0 by default, and
// four ranks of a KNN run shared one GPU while three sat idle.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "mpi/comm.hpp"
#include "src/backend/rank_backend.hpp"
#include "src/knn/batch_vote.hpp"
#include "src/knn/search.hpp"
#include "src/sam/scorer.hpp"

namespace hb {
namespace {

class RankGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int devices = 0;
    const bool enough = cudaGetDeviceCount(&devices) == cudaSuccess && devices > where_.local_rank;
    if (world_.any(!enough)) GTEST_SKIP() << "no CUDA device for every rank";
    devices_ = devices;
    auto device = rank_device(BackendKind::cuda, world_);
    ASSERT_TRUE(device.ok()) << device.error().line();
    ASSERT_EQ(*device, where_.local_rank);
    // Another GPU current on this thread: what follows must not depend on it.
    ASSERT_EQ(cudaSetDevice((where_.local_rank + 1) % devices_), cudaSuccess);
  }
  static int current_device() {
    int device = -1;
    cudaGetDevice(&device);
    return device;
  }

  mpi::Comm world_ = mpi::Comm::world();
  mpi::Placement where_ = mpi::placement(world_);
  int devices_ = 0;
};

TEST_F(RankGpuTest, TheProcessGpuIsTheBoundOne) { EXPECT_EQ(process_gpu(), where_.local_rank); }

TEST_F(RankGpuTest, KnnSearchAndVoteRunOnTheRanksGpu) {
  const std::int64_t dims = 4, rows = 6, nq = 3;
  std::vector<float> training(rows * dims), queries(nq * dims);
  for (std::size_t i = 0; i < training.size(); ++i) training[i] = static_cast<float>(i % 7);
  for (std::size_t i = 0; i < queries.size(); ++i) queries[i] = static_cast<float>(i % 5);
  auto search = knn::make_knn_search(BackendKind::cuda, {});
  ASSERT_TRUE(search.ok()) << search.error().line();
  knn::TopK running(nq, 2);
  ASSERT_TRUE((*search)->search(queries.data(), nq, {training.data(), rows, dims, 0}, running).ok());
  EXPECT_EQ(current_device(), where_.local_rank);

  ASSERT_EQ(cudaSetDevice((where_.local_rank + 1) % devices_), cudaSuccess);
  const std::vector<std::uint16_t> labels{0, 1, 0, 1, 0, 1};
  auto voter = knn::make_batch_voter("cuda", {labels, 2});
  ASSERT_TRUE(voter.ok()) << voter.error().line();
  std::vector<knn::VoteResult> votes(nq);
  ASSERT_TRUE((*voter)->vote(running, nq, votes).ok());
  EXPECT_EQ(current_device(), where_.local_rank);
}

TEST_F(RankGpuTest, SamScorerRunsOnTheRanksGpu) {
  auto scorer = sam::make_sam_scorer(BackendKind::cuda);
  ASSERT_TRUE(scorer.ok()) << scorer.error().line();
  EXPECT_EQ(current_device(), where_.local_rank);
}

}  // namespace
}  // namespace hb
