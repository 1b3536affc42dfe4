// Symmetric eigendecomposition: order, sign convention, reconstruction.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "src/linalg/eigen.hpp"

namespace hb::linalg {
namespace {

Matrix random_symmetric(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  Matrix a(n, n);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = i; j < n; ++j) a(i, j) = a(j, i) = normal(rng);
  return a;
}

TEST(MatrixTest, ProductsAndTransposeAgreeWithHandComputedValues) {
  Matrix a(2, 3);
  a.data = {1, 2, 3, 4, 5, 6};
  Matrix b(3, 2);
  b.data = {7, 8, 9, 10, 11, 12};
  EXPECT_EQ(multiply(a, b).data, (std::vector<double>{58, 64, 139, 154}));
  EXPECT_EQ(multiply_at_b(a, a).data, (std::vector<double>{17, 22, 27, 22, 29, 36, 27, 36, 45}));
  EXPECT_EQ(transpose(a).data, (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(first_columns(a, 2).data, (std::vector<double>{1, 2, 4, 5}));
}

TEST(EigenTest, TwoByTwoHasKnownValuesAndSigns) {
  Matrix a(2, 2);
  a.data = {2, 1, 1, 2};
  auto eig = symmetric_eigen(a);
  ASSERT_TRUE(eig.ok());
  EXPECT_NEAR(eig->values[0], 3.0, 1e-14);
  EXPECT_NEAR(eig->values[1], 1.0, 1e-14);
  const double h = std::sqrt(0.5);
  EXPECT_NEAR(eig->vectors(0, 0), h, 1e-14);
  EXPECT_NEAR(eig->vectors(1, 0), h, 1e-14);
  EXPECT_NEAR(eig->vectors(0, 1), h, 1e-14);  // tie in magnitude: the first entry is made positive
  EXPECT_NEAR(eig->vectors(1, 1), -h, 1e-14);
}

TEST(EigenTest, RandomMatrixIsReconstructedWithDescendingValuesAndOrthonormalVectors) {
  const auto a = random_symmetric(9, 1);
  auto eig = symmetric_eigen(a);
  ASSERT_TRUE(eig.ok());
  for (std::size_t j = 1; j < eig->values.size(); ++j) EXPECT_GE(eig->values[j - 1], eig->values[j]);
  EXPECT_LT(max_abs_difference(multiply_at_b(eig->vectors, eig->vectors), Matrix::identity(9)), 1e-13);
  Matrix lv = eig->vectors;
  for (std::int64_t i = 0; i < 9; ++i)
    for (std::int64_t j = 0; j < 9; ++j) lv(i, j) *= eig->values[static_cast<std::size_t>(j)];
  EXPECT_LT(max_abs_difference(multiply(a, eig->vectors), lv), 1e-12);
  for (std::int64_t j = 0; j < 9; ++j) {
    std::int64_t at = 0;
    for (std::int64_t i = 1; i < 9; ++i)
      if (std::abs(eig->vectors(i, j)) > std::abs(eig->vectors(at, j))) at = i;
    EXPECT_GT(eig->vectors(at, j), 0.0) << "column " << j;
  }
}

TEST(EigenTest, SignsDoNotDependOnTheInputSignOfTheVectors) {
  const auto a = random_symmetric(6, 2);
  auto first = symmetric_eigen(a);
  ASSERT_TRUE(first.ok());
  Matrix flipped = first->vectors;
  for (std::int64_t i = 0; i < 6; ++i) flipped(i, 2) = -flipped(i, 2);
  normalise_signs(flipped);
  EXPECT_EQ(flipped.data, first->vectors.data);
}

TEST(EigenTest, RejectsNonFiniteAndNonSquareInput) {
  Matrix a(2, 2);
  a.data = {1, NAN, NAN, 1};
  EXPECT_FALSE(symmetric_eigen(a).ok());
  EXPECT_FALSE(symmetric_eigen(Matrix(2, 3)).ok());
}

}  // namespace
}  // namespace hb::linalg
