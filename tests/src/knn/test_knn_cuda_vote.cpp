// The GPU vote (kernels/knn/vote.cu through the BatchVoter seam) against the CPU Voter:
// identical labels and bitwise identical confidences, on lists built to be full of
// ties (few classes, repeated distances, zero distances, empty slots).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "src/knn/batch_vote.hpp"
#include "src/knn/cuda_search.hpp"
#include "tests/src/knn/knn_cuda_test_support.hpp"

namespace hb::knn {
namespace {

// nq ascending lists of k pairs over n training rows; distances from a small set (so
// that weights tie), some exactly 0, and a random number of empty slots at the end.
TopK tie_prone_lists(std::int64_t nq, int k, std::int64_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  const float levels[] = {0.0f, 0.25f, 1.0f, 1.0f, 4.0f, 9.0f, 0.5f, 2.0f};
  std::uniform_int_distribution<int> level(0, 7), zero_chance(0, 9);
  std::uniform_int_distribution<std::int64_t> row(0, n - 1);
  TopK lists(nq, k);
  for (std::int64_t q = 0; q < nq; ++q) {
    const int filled = k == 1 ? 1 : std::uniform_int_distribution<int>(k / 2, k)(rng);
    std::vector<Neighbor> pairs;
    for (int j = 0; j < filled; ++j) {
      const float d = zero_chance(rng) == 0 ? 0.0f : levels[level(rng)];
      pairs.push_back({d, row(rng)});
    }
    std::sort(pairs.begin(), pairs.end());
    for (int j = 0; j < filled; ++j) {
      lists.distances(q)[j] = pairs[static_cast<std::size_t>(j)].distance;
      lists.indices(q)[j] = pairs[static_cast<std::size_t>(j)].index;
    }
  }
  return lists;
}

TEST(CudaVote, EqualsTheCpuVoterBitForBit) {
  HB_REQUIRE_GPU();
  constexpr std::int64_t kRows = 5000;
  for (const int classes : {2, 4, 300, cuda_vote_max_classes()})  // the last fills the shared memory
    for (const int k : {1, 4, 15, 64, 4096}) {
      const std::int64_t nq = k > 1000 ? 200 : 3001;
      std::mt19937 rng(static_cast<std::uint32_t>(classes * 7919 + k));
      std::uniform_int_distribution<int> label(1, classes - 1);
      std::vector<std::uint16_t> labels(kRows);
      for (auto& l : labels) l = static_cast<std::uint16_t>(label(rng));
      const TopK lists = tie_prone_lists(nq, k, kRows, static_cast<std::uint32_t>(k + classes));
      for (const auto metric : {Metric::euclidean, Metric::cosine})
        for (const auto weights : {Weights::uniform, Weights::distance}) {
          const VoteRule rule{labels, classes, metric, weights};
          auto cpu = make_cpu_batch_voter(rule);
          auto gpu = make_cuda_batch_voter(rule);
          ASSERT_TRUE(gpu.ok()) << gpu.error().line();
          std::vector<VoteResult> want(static_cast<std::size_t>(nq)), got(static_cast<std::size_t>(nq));
          ASSERT_TRUE(cpu->vote(lists, nq, want).ok());
          const Status status = (*gpu)->vote(lists, nq, got);
          ASSERT_TRUE(status.ok()) << status.error().line();
          int differences = 0;
          for (std::int64_t q = 0; q < nq; ++q) {
            const auto& a = got[static_cast<std::size_t>(q)];
            const auto& b = want[static_cast<std::size_t>(q)];
            if ((a.label != b.label || a.confidence != b.confidence) && differences++ < 3)
              ADD_FAILURE() << "classes " << classes << " k " << k << " " << metric_name(metric) << " "
                            << weights_name(weights) << " query " << q << ": gpu (" << a.label << ", " << a.confidence
                            << "), cpu (" << b.label << ", " << b.confidence << ")";
          }
          EXPECT_EQ(differences, 0);
        }
    }
}

TEST(CudaVote, EmptyListsVoteForClassZero) {
  HB_REQUIRE_GPU();
  const std::vector<std::uint16_t> labels{1, 2, 3};
  auto gpu = make_cuda_batch_voter({labels, 4, Metric::euclidean, Weights::distance});
  ASSERT_TRUE(gpu.ok());
  const TopK empty(3, 5);
  std::vector<VoteResult> got(3, VoteResult{9, 9.0f});
  ASSERT_TRUE((*gpu)->vote(empty, 3, got).ok());
  for (const auto& v : got) {
    EXPECT_EQ(v.label, 0);
    EXPECT_EQ(v.confidence, 0.0f);
  }
}

// The factory pairs the CUDA search with the GPU voter, and falls back to the CPU when
// the class totals would not fit in shared memory.
TEST(CudaVote, FactoryFollowsTheSearchBackend) {
  HB_REQUIRE_GPU();
  const std::vector<std::uint16_t> labels{1, 2, 3};
  auto gpu = make_batch_voter("cuda", {labels, 4, Metric::euclidean, Weights::uniform});
  ASSERT_TRUE(gpu.ok());
  EXPECT_EQ((*gpu)->backend_name(), "cuda");
  auto many = make_batch_voter("cuda", {labels, cuda_vote_max_classes() + 1, Metric::euclidean, Weights::uniform});
  ASSERT_TRUE(many.ok());
  EXPECT_EQ((*many)->backend_name(), "cpu");
}

}  // namespace
}  // namespace hb::knn
