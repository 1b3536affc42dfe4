// The tensor method's error bound (kernels/knn/tensor_bound.hpp) on the CPU, its scale
// made of the rows' own rounding shares as the search makes it: distances
// expanded from emulated TF32 tensor-core inner products (inputs rounded to 10 bits by
// nearest, as the search does, then converted again by nearest and by truncation, as
// the GEMM may; exact products; FP32 sums truncated toward zero in blocks of 8 and in
// reverse order) lie within the bound of the exact rule's distance (FP32
// FMA chain, expansion, FP64 recompute below the cancellation threshold), on
// adversarial data: values far from the origin, near-ties, duplicated rows, mixed
// scales, at 32, 224 and 1000 bands.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/knn/tensor_bound.hpp"

namespace hb::kernels::knn {
namespace {

using Rows = std::vector<std::vector<float>>;

float norm_of(const std::vector<float>& x) {
  double sum = 0.0;
  for (const float v : x) sum += static_cast<double>(v) * v;
  return static_cast<float>(sum);
}

// The exact rule (src/knn/distance.cpp, kernels/knn/detail/pair.cuh) with an FMA chain.
float exact_distance(const std::vector<float>& q, const std::vector<float>& t) {
  float ip = 0.0f;
  for (std::size_t i = 0; i < q.size(); ++i) ip = std::fma(q[i], t[i], ip);
  const float s = norm_of(q) + norm_of(t);
  const float expanded = s - 2.0f * ip;
  const float refine = 2.0f * static_cast<float>(q.size()) * FLT_EPSILON;
  if (expanded > refine * s) return expanded;
  double direct = 0.0;
  for (std::size_t i = 0; i < q.size(); ++i) {
    const double d = static_cast<double>(q[i]) - static_cast<double>(t[i]);
    direct += d * d;
  }
  return static_cast<float>(direct);
}

float to_tf32(float x, bool truncate) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, 4);
  if (!truncate) bits += 0x1000u;  // round half away from zero on the 13 dropped bits
  bits &= ~0x1fffu;
  float out = 0.0f;
  std::memcpy(&out, &bits, 4);
  return out;
}

// x rounded to a float in the direction of `toward`: 0 (toward zero), +inf (up), -inf (down).
float rounded_toward(double x, float toward) {
  float r = static_cast<float>(x);
  const double rd = static_cast<double>(r);
  if ((toward > x && rd < x) || (toward < x && rd > x)) r = std::nextafter(r, toward);
  return r;
}
float toward_zero(double x) { return rounded_toward(x, 0.0f); }
float round_up(double x) { return rounded_toward(x, INFINITY); }
float round_down(double x) { return rounded_toward(x, -INFINITY); }

// A tensor core's inner product as modelled, on inputs the search has rounded to TF32
// by nearest (tensor_round_rows): the GEMM's conversion (`truncate`: by truncation)
// leaves them unchanged; blocks of 8 exact products added to the accumulator at once
// and truncated; `reverse`: the blocks in reverse band order.
float tensor_inner_product(const std::vector<float>& q, const std::vector<float>& t, bool truncate, bool reverse) {
  const std::size_t n = q.size();
  float acc = 0.0f;
  for (std::size_t b = 0; b < n; b += 8) {
    const std::size_t start = reverse ? (n - 1) / 8 * 8 - b : b;
    double block = acc;
    for (std::size_t i = start; i < std::min(n, start + 8); ++i)
      block += static_cast<double>(to_tf32(to_tf32(q[i], false), truncate)) *
               static_cast<double>(to_tf32(to_tf32(t[i], false), truncate));
    acc = toward_zero(block);
  }
  return acc;
}

// A row's share of the scale as tensor_round_rows makes it, rounded up to a float.
float share_of(const std::vector<float>& x) {
  double err2 = 0.0, norm2 = 0.0;
  for (const float v : x) {
    const double e = static_cast<double>(to_tf32(v, false)) - v;
    err2 += e * e;
    norm2 += static_cast<double>(v) * v;
  }
  return round_up(tensor_rounding_share(err2, norm2));
}

// The scale of a query row against a chunk: tensor_error_scale_f with the row's share
// and the chunk's largest, summed rounding up (tensor.cu's row_scale).
float row_scale(const std::vector<float>& q, float chunk_share, int dims) {
  return round_up(static_cast<double>(round_up(static_cast<double>(tensor_error_scale_f(dims)) + share_of(q))) +
                  chunk_share);
}

float largest_share(const Rows& rows) {
  float largest = 0.0f;
  for (const auto& row : rows) largest = std::max(largest, share_of(row));
  return largest;
}

// The largest |D~ - D_f| / E over every pair of `rows`, every emulation.
double worst_ratio(const Rows& rows) {
  double worst = 0.0;
  const int dims = static_cast<int>(rows.front().size());
  const double floor = tensor_error_floor(dims);
  const float chunk_share = largest_share(rows);
  for (std::size_t a = 0; a < rows.size(); ++a) {
    const double scale = row_scale(rows[a], chunk_share, dims);
    for (std::size_t b = 0; b < rows.size(); ++b) {
      const float exact = exact_distance(rows[a], rows[b]);
      const float s = norm_of(rows[a]) + norm_of(rows[b]);
      const double bound = scale * s + floor;
      for (const bool truncate : {false, true})
        for (const bool reverse : {false, true}) {
          const float approx = s - 2.0f * tensor_inner_product(rows[a], rows[b], truncate, reverse);
          worst = std::max(worst, std::fabs(static_cast<double>(approx) - exact) / bound);
        }
    }
  }
  return worst;
}

Rows random_rows(int count, int dims, double offset, double spread, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> value(-spread, spread);
  Rows rows(static_cast<std::size_t>(count), std::vector<float>(static_cast<std::size_t>(dims)));
  for (auto& row : rows)
    for (auto& v : row) v = static_cast<float>(offset + value(rng));
  return rows;
}

TEST(TensorBound, ScaleIsAboveTheDerivedTermsAndGrowsWithBands) {
  for (const int dims : {1, 32, 224, 1000, 8192}) {
    EXPECT_GE(static_cast<double>(tensor_error_scale_f(dims)), tensor_error_scale(dims));
    EXPECT_GT(tensor_error_floor(dims), 0.0);
    EXPECT_TRUE(tensor_bound_applies(dims));
  }
  EXPECT_LT(tensor_error_scale(32), tensor_error_scale(224));
  EXPECT_LT(tensor_error_scale(224), 3e-3);  // what keeps the kept pairs few at d = 224
  EXPECT_FALSE(tensor_bound_applies(0));
}

// A row's share: 0 for a zero row; at most 1.001 2^-11 (the bound on each band's own
// rounding) and about 0.4 2^-11 on uniform values, whose rounding errors spread over
// the bands; unbounded for NaN, infinity and rows whose subnormal values err by more.
TEST(TensorBound, RowSharesAreTheirRoundingErrorsOverTheirNorms) {
  EXPECT_EQ(share_of(std::vector<float>(224, 0.0f)), 0.0f);
  const auto rows = random_rows(64, 224, 0.0, 1.0, 3);
  for (const auto& row : rows) {
    EXPECT_LE(share_of(row), 1.002 * 0x1p-11);
    EXPECT_LT(share_of(row), 0.5 * 0x1p-11);
  }
  std::vector<float> bad(224, 1.0f);
  bad[5] = NAN;
  EXPECT_EQ(share_of(bad), static_cast<float>(INFINITY));
  bad[5] = INFINITY;
  EXPECT_EQ(share_of(bad), static_cast<float>(INFINITY));
  EXPECT_EQ(share_of(std::vector<float>(224, 3e-44f)), static_cast<float>(INFINITY));  // subnormal
}

TEST(TensorBound, HoldsOnAdversarialData) {
  for (const int dims : {32, 224, 1000}) {
    const auto seed = static_cast<std::uint32_t>(dims);
    // Far from the origin: the expansion cancels to a few digits.
    EXPECT_LE(worst_ratio(random_rows(24, dims, 1e4, 1.0, seed)), 1.0) << "far, dims " << dims;
    // Uniform near the origin, and mixed signs with large spread.
    EXPECT_LE(worst_ratio(random_rows(24, dims, 0.0, 1.0, seed + 1)), 1.0) << "uniform, dims " << dims;
    EXPECT_LE(worst_ratio(random_rows(24, dims, 0.0, 3e5, seed + 2)), 1.0) << "wide, dims " << dims;
    // Near-ties and duplicates: rows equal up to one unit in the last place.
    auto near = random_rows(12, dims, 500.0, 50.0, seed + 3);
    for (int copy = 0; copy < 12; ++copy) {
      auto row = near[static_cast<std::size_t>(copy)];
      if (copy % 2) row[static_cast<std::size_t>(copy % dims)] = std::nextafter(row[static_cast<std::size_t>(copy % dims)], 1e9f);
      near.push_back(row);
    }
    EXPECT_LE(worst_ratio(near), 1.0) << "near-ties, dims " << dims;
    // Mixed scales: the bound follows qn + tn, not the pair's own distance.
    auto mixed = random_rows(12, dims, 0.0, 1e-3, seed + 4);
    const auto large = random_rows(12, dims, 2e3, 10.0, seed + 5);
    mixed.insert(mixed.end(), large.begin(), large.end());
    EXPECT_LE(worst_ratio(mixed), 1.0) << "mixed, dims " << dims;
  }
}

// The filter's screen (tensor_bound.hpp): for every pair, x = fl(tn - 2 ip~) is at most
// L(lower), where lower is the bracket's lower end as tensor.cu rounds it; so a pair
// that the screen rules out (x > L(B)) has lower > B for every threshold B. Returns the
// largest x - L(lower) in units of u M (u = 2^-24, M = qn + the largest tn).
double worst_screen_excess(const Rows& rows) {
  const int dims = static_cast<int>(rows.front().size());
  const double floor = tensor_error_floor(dims);
  const float chunk_share = largest_share(rows);
  float largest = 0.0f;
  for (const auto& row : rows) largest = std::max(largest, norm_of(row));
  double worst = -INFINITY;
  for (const auto& q : rows) {
    const float scale = row_scale(q, chunk_share, dims);
    for (const auto& t : rows) {
      const float qn = norm_of(q), tn = norm_of(t);
      for (const bool truncate : {false, true})
        for (const bool reverse : {false, true}) {
          const float ip = tensor_inner_product(q, t, truncate, reverse);
          const float s = qn + tn;
          const float approx = s - 2.0f * ip;
          const float e = round_up(static_cast<double>(s) * scale + floor);
          const float lower = round_down(static_cast<double>(approx) - e);
          const float x = std::fma(-2.0f, ip, tn);
          const float limit = round_up(tensor_screen_limit(lower, qn, largest, scale, dims));
          worst = std::max(worst, (static_cast<double>(x) - limit) / (0x1p-24 * (static_cast<double>(qn) + largest)));
        }
    }
  }
  return worst;
}

TEST(TensorBound, ScreenNeverRulesOutAPairWithinTheThreshold) {
  for (const int dims : {32, 224, 1000}) {
    const auto seed = static_cast<std::uint32_t>(dims) + 100;
    EXPECT_LE(worst_screen_excess(random_rows(24, dims, 1e4, 1.0, seed)), 0.0) << "far, dims " << dims;
    EXPECT_LE(worst_screen_excess(random_rows(24, dims, 0.0, 1.0, seed + 1)), 0.0) << "uniform, dims " << dims;
    EXPECT_LE(worst_screen_excess(random_rows(24, dims, 0.0, 3e5, seed + 2)), 0.0) << "wide, dims " << dims;
    auto mixed = random_rows(12, dims, 0.0, 1e-3, seed + 3);
    const auto large = random_rows(12, dims, 2e3, 10.0, seed + 4);
    mixed.insert(mixed.end(), large.begin(), large.end());
    EXPECT_LE(worst_screen_excess(mixed), 0.0) << "mixed, dims " << dims;
  }
  // No screen for an unbounded threshold or norms near FP32's range.
  const float c = tensor_error_scale_f(224);
  EXPECT_EQ(tensor_screen_limit(INFINITY, 1.0f, 1.0f, c, 224), INFINITY);
  EXPECT_EQ(tensor_screen_limit(NAN, 1.0f, 1.0f, c, 224), INFINITY);
  EXPECT_EQ(tensor_screen_limit(1.0f, 1e38f, 1e38f, c, 224), INFINITY);
  EXPECT_EQ(tensor_screen_limit(1.0f, 1.0f, 1.0f, INFINITY, 224), INFINITY);
}

// The screen is tight: for the pair of the largest norm its slack over the bracket is a
// few dozen units in the last place of qn + tn.
TEST(TensorBound, ScreenIsWithinAFewDozenUlpsOfTheBracket) {
  EXPECT_GT(worst_screen_excess(random_rows(16, 224, 0.5, 0.5, 11)), -64.0);
}

// The bound is not vacuous: on data near the origin the emulated error reaches a
// visible share of it (so a looser model would show up here as a larger margin).
TEST(TensorBound, IsWithinAFewTimesTheEmulatedError) {
  EXPECT_GT(worst_ratio(random_rows(32, 224, 0.5, 0.5, 9)), 0.01);
}

}  // namespace
}  // namespace hb::kernels::knn
