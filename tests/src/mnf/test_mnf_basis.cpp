// MNF and PCA bases: defining identities, singular noise, selection, denoising.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "src/mnf/cpu_tile_ops.hpp"
#include "src/linalg/eigen.hpp"
#include "src/mnf/basis.hpp"
#include "tests/src/mnf/test_mnf_support.hpp"

namespace hb::mnf {
namespace {

using linalg::Matrix;

Matrix random_spd(std::int64_t n, std::uint64_t seed, double ridge) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  Matrix a(n, n);
  for (auto& x : a.data) x = normal(rng);
  Matrix s = linalg::multiply_at_b(a, a);
  for (std::int64_t i = 0; i < n; ++i) s(i, i) += ridge;
  return s;
}

std::vector<std::int64_t> band_list(std::int64_t n) {
  std::vector<std::int64_t> b;
  for (std::int64_t i = 0; i < n; ++i) b.push_back(i);
  return b;
}

MeanCovariance stats_of(const Matrix& cov) {
  return {100, std::vector<double>(static_cast<std::size_t>(cov.rows), 5.0), cov};
}

TEST(MnfBasisTest, WhitensNoiseAndDiagonalisesData) {
  const auto noise = random_spd(7, 1, 0.5);
  const auto data = random_spd(7, 2, 10.0);
  auto basis = mnf_basis(stats_of(data), noise, band_list(7));
  ASSERT_TRUE(basis.ok());
  EXPECT_TRUE(basis->warnings.empty());
  const auto& t = basis->forward;
  EXPECT_LT(linalg::max_abs_difference(linalg::multiply_at_b(t, linalg::multiply(noise, t)), Matrix::identity(7)), 1e-10);
  Matrix expected(7, 7);
  for (std::int64_t i = 0; i < 7; ++i) expected(i, i) = basis->eigenvalues[static_cast<std::size_t>(i)];
  const auto tct = linalg::multiply_at_b(t, linalg::multiply(data, t));
  EXPECT_LT(linalg::max_abs_difference(tct, expected), 1e-10 * basis->eigenvalues[0]);
  EXPECT_LT(linalg::max_abs_difference(linalg::multiply_at_b(t, basis->inverse), Matrix::identity(7)), 1e-10);
  for (std::size_t j = 1; j < 7; ++j) EXPECT_GE(basis->eigenvalues[j - 1], basis->eigenvalues[j]);
}

TEST(MnfBasisTest, EigenvaluesEqualThoseOfTheSymmetricallyWhitenedCovariance) {
  // SPy: eig(N^-1/2 C N^-1/2) with the symmetric inverse square root.
  const auto noise = random_spd(5, 3, 0.2);
  const auto data = random_spd(5, 4, 3.0);
  auto eig_n = linalg::symmetric_eigen(noise);
  ASSERT_TRUE(eig_n.ok());
  Matrix scaled = eig_n->vectors;
  for (std::int64_t i = 0; i < 5; ++i)
    for (std::int64_t j = 0; j < 5; ++j) scaled(i, j) /= std::sqrt(eig_n->values[static_cast<std::size_t>(j)]);
  const auto inv_sqrt = linalg::multiply(scaled, linalg::transpose(eig_n->vectors));
  auto reference = linalg::symmetric_eigen(linalg::multiply(inv_sqrt, linalg::multiply(data, inv_sqrt)));
  auto basis = mnf_basis(stats_of(data), noise, band_list(5));
  ASSERT_TRUE(basis.ok() && reference.ok());
  for (std::size_t j = 0; j < 5; ++j)
    EXPECT_NEAR(basis->eigenvalues[j], reference->values[j], 1e-10 * reference->values[0]);
}

TEST(MnfBasisTest, SingularNoiseFromAConstantBandIsReportedAndDropped) {
  auto noise = random_spd(4, 5, 1.0);
  auto data = random_spd(4, 6, 5.0);
  for (std::int64_t i = 0; i < 4; ++i) noise(2, i) = noise(i, 2) = data(2, i) = data(i, 2) = 0.0;
  const std::vector<std::int64_t> bands{0, 3, 7, 9};  // scene bands, one bad band already left out
  auto basis = mnf_basis(stats_of(data), noise, bands);
  ASSERT_TRUE(basis.ok());
  EXPECT_EQ(basis->dropped_directions, 1);
  EXPECT_EQ(basis->components(), 3);
  ASSERT_EQ(basis->warnings.size(), 1u);
  EXPECT_NE(basis->warnings[0].find("band(s) 7"), std::string::npos) << basis->warnings[0];
  for (double x : basis->forward.data) EXPECT_TRUE(std::isfinite(x));
  for (double x : basis->eigenvalues) EXPECT_TRUE(std::isfinite(x));
  for (std::int64_t j = 0; j < 3; ++j) EXPECT_NEAR(basis->forward(2, j), 0.0, 1e-12) << "the constant band carries no weight";
}

TEST(MnfBasisTest, ZeroNoiseIsAnError) {
  EXPECT_FALSE(mnf_basis(stats_of(random_spd(3, 7, 1.0)), Matrix(3, 3), band_list(3)).ok());
}

TEST(PcaBasisTest, IsTheEigendecompositionOfTheDataCovariance) {
  const auto data = random_spd(6, 8, 1.0);
  auto basis = pca_basis(stats_of(data), band_list(6));
  ASSERT_TRUE(basis.ok());
  double trace = 0.0, sum = 0.0;
  for (std::int64_t i = 0; i < 6; ++i) trace += data(i, i);
  for (double l : basis->eigenvalues) sum += l;
  EXPECT_NEAR(sum, trace, 1e-10 * trace);
  EXPECT_LT(linalg::max_abs_difference(linalg::multiply_at_b(basis->forward, basis->forward), Matrix::identity(6)), 1e-12);
}

Selection count(std::int64_t n) {
  Selection s;
  s.components = n;
  return s;
}
Selection snr(double x) {
  Selection s;
  s.snr = x;
  return s;
}
Selection variance(double f) {
  Selection s;
  s.variance = f;
  return s;
}
Selection both(std::int64_t n, double x) {
  Selection s = count(n);
  s.snr = x;
  return s;
}

TEST(SelectionTest, ComponentsSnrAndVarianceFollowTheirDefinitions) {
  Basis basis;
  basis.eigenvalues = {101.0, 21.0, 11.0, 2.0, 1.0};
  basis.forward = Matrix(5, 5);
  EXPECT_EQ(*select_components(basis, {}), 5);
  EXPECT_EQ(*select_components(basis, count(2)), 2);
  EXPECT_EQ(*select_components(basis, snr(10.0)), 3);  // eigenvalue >= snr + 1, as SPy num_with_snr
  EXPECT_EQ(*select_components(basis, snr(20.0)), 2);
  EXPECT_EQ(*select_components(basis, variance(101.0 / 136.0)), 1);
  EXPECT_EQ(*select_components(basis, variance(0.75)), 2);
  EXPECT_EQ(*select_components(basis, variance(1.0)), 5);
  EXPECT_FALSE(select_components(basis, count(6)).ok());
  EXPECT_FALSE(select_components(basis, count(0)).ok());
  EXPECT_FALSE(select_components(basis, snr(1000.0)).ok());
  EXPECT_FALSE(select_components(basis, variance(1.5)).ok());
  EXPECT_FALSE(select_components(basis, both(2, 1.0)).ok());
  basis.method = Method::pca;
  EXPECT_FALSE(select_components(basis, snr(1.0)).ok());
}

TEST(DenoiseTest, NoiseFreeLowRankDataIsReturnedUnchanged) {
  // 3 sources in 8 bands around a large mean; any noise model; keep 3 components.
  const std::int64_t bands = 8, rank = 3;
  testing::Scene scene(10, 12, bands);
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  Matrix mixing(rank, bands);
  for (auto& x : mixing.data) x = normal(rng);
  std::vector<std::vector<double>> pixels;
  for (std::int64_t r = 0; r < 10; ++r)
    for (std::int64_t c = 0; c < 12; ++c) {
      const double s[3] = {20.0 * normal(rng), 5.0 * normal(rng), normal(rng)};
      for (std::int64_t b = 0; b < bands; ++b) {
        double v = 1000.0 + 10.0 * static_cast<double>(b);
        for (std::int64_t k = 0; k < rank; ++k) v += s[k] * mixing(k, b);
        scene.at(r, c, b) = v;
      }
      pixels.push_back(scene.pixel(r, c));
    }
  const auto data = testing::reference_stats(pixels);
  Matrix noise(bands, bands);
  for (std::int64_t b = 0; b < bands; ++b) noise(b, b) = 0.01 * static_cast<double>(b + 1);
  auto basis = mnf_basis(data, noise, band_list(bands));
  ASSERT_TRUE(basis.ok());
  const auto map = denoise_map(*basis, rank);
  auto ops = make_cpu_tile_ops();
  const auto tile = testing::make_tile<double>(scene, {0, 10});
  std::vector<float> out(static_cast<std::size_t>(10 * 12 * bands));
  ASSERT_TRUE(ops->transform(tile, testing::all_bands(bands), map, out).ok());
  for (std::size_t i = 0; i < out.size(); ++i)
    ASSERT_NEAR(out[i], scene.values[i], 1e-6 * std::abs(scene.values[i])) << i;
}

TEST(TransformTest, ExcludedPixelsGetTheFillValue) {
  testing::Scene scene = testing::random_scene(3, 4, 2, 12);
  scene.at(1, 2, 1) = -1.0;
  PixelRules rules = testing::all_bands(2);
  rules.ignore_value = -1.0;
  LinearMap map;
  map.center = {1.0, 2.0};
  map.matrix = Matrix(2, 1);
  map.matrix.data = {1.0, -1.0};
  std::vector<float> out(12);
  auto ops = make_cpu_tile_ops();
  ASSERT_TRUE(ops->transform(testing::make_tile<double>(scene, {0, 3}), rules, map, out).ok());
  for (std::int64_t p = 0; p < 12; ++p) {
    const auto r = p / 4, c = p % 4;
    if (r == 1 && c == 2)
      EXPECT_TRUE(std::isnan(out[static_cast<std::size_t>(p)]));
    else
      EXPECT_NEAR(out[static_cast<std::size_t>(p)], (scene.at(r, c, 0) - 1.0) - (scene.at(r, c, 1) - 2.0), 1e-3);
  }
}

}  // namespace
}  // namespace hb::mnf
