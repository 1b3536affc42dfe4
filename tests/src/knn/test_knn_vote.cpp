// The vote follows scikit-learn's KNeighborsClassifier exactly: ties go to the smallest
// class id; distance weights are 1/d on Euclidean (not squared) distances, and zero
// distances take the whole vote (sklearn.neighbors._base._get_weights).
#include <gtest/gtest.h>

#include <vector>

#include "src/knn/batch_vote.hpp"
#include "src/knn/topk.hpp"
#include "src/knn/vote.hpp"

namespace hb::knn {
namespace {

// Training row i has label labels[i]; the neighbours are rows 0..k-1 in that order.
VoteResult vote_on(const std::vector<std::uint16_t>& labels, const std::vector<float>& ranking_distances,
                   Weights weights, Metric metric = Metric::euclidean) {
  Voter voter(labels, 10, metric, weights);
  std::vector<std::int64_t> indices(labels.size());
  for (std::size_t i = 0; i < indices.size(); ++i) indices[i] = static_cast<std::int64_t>(i);
  return voter.vote(ranking_distances.data(), indices.data(), static_cast<int>(labels.size()));
}

TEST(KnnVote, MajorityWinsWithItsShareAsConfidence) {
  const auto v = vote_on({4, 2, 4, 4, 2}, {1, 2, 3, 4, 5}, Weights::uniform);
  EXPECT_EQ(v.label, 4);
  EXPECT_FLOAT_EQ(v.confidence, 0.6f);
}

TEST(KnnVote, UniformTieGoesToTheSmallestClassId) {
  // The nearer neighbour is class 3, but 1 and 3 tie 2-2: sklearn's mode picks 1.
  const auto v = vote_on({3, 1, 3, 1}, {0.5f, 1, 2, 3}, Weights::uniform);
  EXPECT_EQ(v.label, 1);
  EXPECT_FLOAT_EQ(v.confidence, 0.5f);
}

TEST(KnnVote, DistanceWeightsUseEuclideanNotSquaredDistances) {
  // Squared 1, 4, 4 -> Euclidean 1, 2, 2 -> weights 1, 0.5, 0.5: an exact tie 1 vs 1.
  // (On squared distances class 2 would get 0.5 and class 1 would win clearly.)
  const auto tie = vote_on({2, 1, 1}, {1, 4, 4}, Weights::distance);
  EXPECT_EQ(tie.label, 1);
  EXPECT_FLOAT_EQ(tie.confidence, 0.5f);
  // Squared 1, 9, 9 -> weights 1, 1/3, 1/3: class 2 wins with 1 / (5/3) = 0.6.
  const auto win = vote_on({2, 1, 1}, {1, 9, 9}, Weights::distance);
  EXPECT_EQ(win.label, 2);
  EXPECT_NEAR(win.confidence, 0.6, 1e-6);
}

TEST(KnnVote, ZeroDistancesTakeTheWholeVote) {
  // Three far neighbours of class 1 outvote nothing: only the two at d == 0 vote.
  const auto v = vote_on({5, 1, 1, 1}, {0, 0.01f, 0.01f, 0.01f}, Weights::distance);
  EXPECT_EQ(v.label, 5);
  EXPECT_FLOAT_EQ(v.confidence, 1.0f);
  // Two zero-distance neighbours of different classes tie: the smaller id wins.
  const auto tie = vote_on({7, 6, 1, 1}, {0, 0, 4, 4}, Weights::distance);
  EXPECT_EQ(tie.label, 6);
  EXPECT_FLOAT_EQ(tie.confidence, 0.5f);
}

TEST(KnnVote, CosineWeightsUseTheDistanceAsIs) {
  // Cosine distances 0.1 and 0.4, 0.4: weights 10 vs 2.5 + 2.5.
  const auto v = vote_on({3, 2, 2}, {0.1f, 0.4f, 0.4f}, Weights::distance, Metric::cosine);
  EXPECT_EQ(v.label, 3);
  EXPECT_NEAR(v.confidence, 10.0 / 15.0, 1e-6);
}

TEST(KnnVote, UnfilledSlotsDoNotVote) {
  const std::vector<std::uint16_t> labels{2, 3};
  Voter voter(labels, 4, Metric::euclidean, Weights::uniform);
  const std::vector<float> d{1, kNoDistance, kNoDistance};
  const std::vector<std::int64_t> i{1, kNoIndex, kNoIndex};
  const auto v = voter.vote(d.data(), i.data(), 3);
  EXPECT_EQ(v.label, 3);
  EXPECT_FLOAT_EQ(v.confidence, 1.0f);
}

// The batch seam used by classify_scene: the CPU implementation is the Voter, list by
// list, and "cpu" always selects it (the CUDA voter has its own test on the device).
TEST(KnnBatchVote, CpuBatchEqualsTheVoterListByList) {
  const std::vector<std::uint16_t> labels{1, 2, 2, 3, 1, 3, 2};
  TopK lists(3, 4);
  const std::vector<Neighbor> a{{0.0f, 1}, {1.0f, 0}, {1.0f, 3}, {4.0f, 2}};
  const std::vector<Neighbor> b{{1.0f, 4}, {2.0f, 5}, {3.0f, 6}};
  lists.merge(0, a);
  lists.merge(1, b);  // list 2 stays empty
  for (const auto weights : {Weights::uniform, Weights::distance}) {
    auto batch = make_batch_voter("cpu", {labels, 4, Metric::euclidean, weights});
    ASSERT_TRUE(batch.ok());
    EXPECT_EQ((*batch)->backend_name(), "cpu");
    std::vector<VoteResult> got(3);
    ASSERT_TRUE((*batch)->vote(lists, 3, got).ok());
    Voter voter(labels, 4, Metric::euclidean, weights);
    for (std::int64_t q = 0; q < 3; ++q) {
      const VoteResult want = voter.vote(lists.distances(q), lists.indices(q), 4);
      EXPECT_EQ(got[static_cast<std::size_t>(q)].label, want.label) << q;
      EXPECT_EQ(got[static_cast<std::size_t>(q)].confidence, want.confidence) << q;
    }
    EXPECT_EQ(got[2].label, 0);
    std::vector<VoteResult> too_small(2);
    EXPECT_FALSE((*batch)->vote(lists, 3, too_small).ok());
  }
}

}  // namespace
}  // namespace hb::knn
