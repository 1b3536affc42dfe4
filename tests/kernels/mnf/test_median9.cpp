// The median network used by the median3x3 noise estimator, checked on the host (it is
// the same code the device runs): every permutation pattern with ties, against sorting.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <random>

#include "kernels/mnf/median9.hpp"

namespace hb::kernels::mnf {
namespace {

double median_by_sort(std::array<double, 9> v) {
  std::sort(v.begin(), v.end());
  return v[4];
}

double median_by_network(const std::array<double, 9>& v) {
  return median9(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]);
}

TEST(Median9, EveryPermutationOfDistinctValues) {
  std::array<double, 9> v{1, 2, 3, 4, 5, 6, 7, 8, 9};
  int checked = 0;
  do {
    ASSERT_EQ(median_by_network(v), 5.0);
    ++checked;
  } while (std::next_permutation(v.begin(), v.end()));
  EXPECT_EQ(checked, 362880);
}

TEST(Median9, RandomValuesWithTies) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> small(-3, 3);
  std::normal_distribution<double> wide(0.0, 1e4);
  for (int trial = 0; trial < 200000; ++trial) {
    std::array<double, 9> v{};
    for (auto& x : v) x = trial % 2 ? static_cast<double>(small(rng)) : wide(rng);
    ASSERT_EQ(median_by_network(v), median_by_sort(v));
  }
}

}  // namespace
}  // namespace hb::kernels::mnf
