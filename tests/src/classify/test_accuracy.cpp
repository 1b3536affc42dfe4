// Accuracy metrics on a confusion matrix worked out by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "src/classify/accuracy.hpp"

namespace hb::knn {
namespace {

// truth \ predicted    1   2   3
//        1            50   3   2     row 55
//        2             5  40   5     row 50
//        3             0  10  35     row 45
//                col  55  53  42     N = 150, diagonal 125
// p_o = 125/150; p_e = (55*55 + 50*53 + 45*42) / 150^2 = 7565/22500
// kappa = (p_o - p_e) / (1 - p_e) = (18750 - 7565) / (22500 - 7565) = 11185/14935
classify::ConfusionMatrix worked_example() {
  classify::ConfusionMatrix m(4);  // class 0 unused
  const int counts[3][3] = {{50, 3, 2}, {5, 40, 5}, {0, 10, 35}};
  for (int t = 0; t < 3; ++t)
    for (int p = 0; p < 3; ++p) m.add(t + 1, p + 1, counts[t][p]);
  return m;
}

TEST(KnnAccuracy, OverallAccuracyAndKappaOfAWorkedExample) {
  const auto s = classify::summarize(worked_example());
  EXPECT_EQ(s.total, 150);
  EXPECT_DOUBLE_EQ(s.overall, 125.0 / 150.0);
  EXPECT_NEAR(s.kappa, 11185.0 / 14935.0, 1e-12);
  EXPECT_NEAR(s.kappa, 0.748912, 1e-6);
  EXPECT_EQ(s.ids, (std::vector<int>{1, 2, 3}));
}

TEST(KnnAccuracy, ProducersAndUsersAccuracyPerClass) {
  const auto s = classify::summarize(worked_example());
  ASSERT_EQ(s.per_class.size(), 3u);
  const double producers[] = {50.0 / 55, 40.0 / 50, 35.0 / 45};
  const double users[] = {50.0 / 55, 40.0 / 53, 35.0 / 42};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(s.per_class[i].producers, producers[i]) << "class " << i + 1;
    EXPECT_DOUBLE_EQ(s.per_class[i].users, users[i]) << "class " << i + 1;
  }
  EXPECT_EQ(s.per_class[1].truth_count, 50);
  EXPECT_EQ(s.per_class[1].predicted_count, 53);
  EXPECT_EQ(s.per_class[1].correct, 40);
}

TEST(KnnAccuracy, PerfectAgreementHasKappaOne) {
  classify::ConfusionMatrix m(3);
  m.add(1, 1, 10);
  m.add(2, 2, 30);
  const auto s = classify::summarize(m);
  EXPECT_DOUBLE_EQ(s.overall, 1.0);
  EXPECT_DOUBLE_EQ(s.kappa, 1.0);
}

TEST(KnnAccuracy, AClassNeverPredictedHasNoUsersAccuracy) {
  classify::ConfusionMatrix m(3);
  m.add(1, 1, 8);
  m.add(2, 1, 2);
  const auto s = classify::summarize(m);
  ASSERT_EQ(s.per_class.size(), 2u);
  EXPECT_DOUBLE_EQ(s.per_class[1].producers, 0.0);
  EXPECT_TRUE(std::isnan(s.per_class[1].users));
  // p_o = 0.8, p_e = 1.0 * 0.8 + 0 => kappa 0: no better than chance.
  EXPECT_NEAR(s.kappa, 0.0, 1e-12);
}

TEST(KnnAccuracy, EmptyMatrixHasUndefinedAccuracy) {
  const auto s = classify::summarize(classify::ConfusionMatrix(3));
  EXPECT_EQ(s.total, 0);
  EXPECT_TRUE(std::isnan(s.overall));
}

}  // namespace
}  // namespace hb::knn
