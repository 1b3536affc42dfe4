// Cross products (cuBLAS DSYRK vs the hand SYRK) and the transform pass (SGEMM vs
// constant memory, and the denoising inverse) against float64 references.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "kernels/mnf/moments.cuh"
#include "kernels/mnf/syrk.cuh"
#include "kernels/mnf/transform.cuh"
#include "tests/kernels/mnf/mnf_test_support.hpp"

namespace hb::kernels::mnf::test {
namespace {

std::vector<double> random_matrix(std::size_t n, unsigned seed, double scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> d(0.0, scale);
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

struct CublasHandle {
  cublasHandle_t h = nullptr;
  CublasHandle() { cublasCreate(&h); }
  ~CublasHandle() { cublasDestroy(h); }
};

// C starts as `base` above the diagonal and a sentinel below; both SYRKs must add X^T X
// to the upper triangle only, agree with each other and with float64 to 1e-12, and the
// hand SYRK with itself bit for bit run to run. 86656 rows is a statistics granule of a
// 677-sample scene; 425 bands span 4 x 4 of the hand SYRK's blocks.
TEST(MnfSyrk, HandSyrkMatchesCublasAndFloat64) {
  HB_REQUIRE_DEVICE();
  CublasHandle handle;
  const std::pair<std::int64_t, int> shapes[] = {{3, 7},       {1073, 45},   {20000, 224},
                                                 {70001, 130}, {86656, 224}, {5000, 425}};
  for (const auto& [rows, nb] : shapes) {
    const std::string what = std::to_string(rows) + " x " + std::to_string(nb);
    const auto nn = static_cast<std::size_t>(nb) * static_cast<std::size_t>(nb);
    const auto X = random_matrix(static_cast<std::size_t>(rows) * static_cast<std::size_t>(nb), 11, 100.0);
    auto base = random_matrix(nn, 12, 1e4);
    for (int i = 0; i < nb; ++i)
      for (int j = 0; j < i; ++j) base[static_cast<std::size_t>(i * nb + j)] = 7.0;
    RefMoments want = ref_moments(X, nb, 0);
    for (std::size_t e = 0; e < nn; ++e) {
      want.cross[e] += base[e];
      want.cross_scale[e] += std::fabs(base[e]);
    }
    DeviceBuffer<double> dX(X), C_blas(base), C_hand(base), C_again(base);
    DeviceBuffer<std::byte> ws(syrk_tiled_workspace_bytes(rows, nb));
    HB_LAUNCH_OK(syrk_cublas(handle.h, dX.get(), rows, nb, C_blas.get(), nullptr));
    HB_LAUNCH_OK(syrk_tiled(dX.get(), rows, nb, C_hand.get(), ws.get(), ws.size(), nullptr));
    HB_LAUNCH_OK(syrk_tiled(dX.get(), rows, nb, C_again.get(), ws.get(), ws.size(), nullptr));
    const auto blas = C_blas.download(), hand = C_hand.download();
    expect_close(blas, want.cross, want.cross_scale, 1e-12, ("cublas " + what).c_str(), nb);
    expect_close(hand, want.cross, want.cross_scale, 1e-12, ("hand " + what).c_str(), nb);
    expect_close(hand, blas, want.cross_scale, 1e-12, ("hand vs cublas " + what).c_str(), nb);
    EXPECT_TRUE(hand == C_again.download()) << "hand SYRK differs run to run, " << what;
    for (int i = 0; i < nb; ++i)
      for (int j = 0; j < i; ++j) {
        const auto e = static_cast<std::size_t>(i * nb + j);
        ASSERT_EQ(blas[e], 7.0) << "cuBLAS wrote below the diagonal, " << what;
        ASSERT_EQ(hand[e], 7.0) << "hand SYRK wrote below the diagonal, " << what;
      }
    HB_LAUNCH_OK(symmetrize_upper(C_hand.get(), nb, nullptr));
    const auto full = C_hand.download();
    for (int i = 0; i < nb; ++i)
      for (int j = 0; j < i; ++j)
        ASSERT_EQ(full[static_cast<std::size_t>(i * nb + j)], full[static_cast<std::size_t>(j * nb + i)]);
  }
}

// Float64 components of a tile: (x - mean) T + offset for valid core pixels.
struct RefComponents {
  std::vector<double> z;    // [rows x m], NaN for excluded pixels
  std::vector<double> std;  // [m] over valid pixels
};

RefComponents ref_components(const Scene& s, std::int64_t r0, std::int64_t r1, const std::vector<double>& mean,
                             const std::vector<float>& T, const std::vector<double>& offset, int m) {
  const auto nb = static_cast<std::size_t>(s.nb());
  const auto mm = static_cast<std::size_t>(m);
  const auto X = ref_centered(s, r0, r1, mean);
  const std::size_t rows = X.size() / nb;
  RefComponents out{std::vector<double>(rows * mm), std::vector<double>(mm, 0.0)};
  std::vector<double> mean_z(mm, 0.0), sq(mm, 0.0);
  std::size_t valid = 0;
  for (std::size_t p = 0; p < rows; ++p) {
    const std::int64_t row = r0 + static_cast<std::int64_t>(p) / s.samples;
    const bool ok = ref_valid(s, row, static_cast<std::int64_t>(p) % s.samples);
    valid += ok ? 1 : 0;
    for (std::size_t j = 0; j < mm; ++j) {
      long double z = offset[j];
      for (std::size_t k = 0; k < nb; ++k) z += static_cast<long double>(X[p * nb + k]) * T[k * mm + j];
      out.z[p * mm + j] = ok ? static_cast<double>(z) : std::nan("");
      if (ok) {
        mean_z[j] += static_cast<double>(z);
        sq[j] += static_cast<double>(z * z);
      }
    }
  }
  for (std::size_t j = 0; j < mm; ++j) {
    const double mu = mean_z[j] / static_cast<double>(valid);
    out.std[j] = std::sqrt(std::max(0.0, sq[j] / static_cast<double>(valid) - mu * mu));
  }
  return out;
}

void expect_components(const std::vector<float>& got, const RefComponents& want, int m, double tol,
                       const std::string& what) {
  int reported = 0;
  for (std::size_t e = 0; e < got.size(); ++e) {
    const double w = want.z[e];
    const double bound = tol * want.std[e % static_cast<std::size_t>(m)];
    const bool ok = std::isnan(w) ? std::isnan(got[e]) : std::fabs(got[e] - w) <= bound;
    if (!ok && reported++ < 5) ADD_FAILURE() << what << " [" << e << "]: " << got[e] << " vs " << w;
  }
}

TEST(MnfTransform, SgemmAndConstantMemoryMatchFloat64) {
  HB_REQUIRE_DEVICE();
  CublasHandle handle;
  for (DataType type : {DataType::i16, DataType::f32})
    for (auto [lines, samples, bands, good] : {std::tuple{37, 29, 50, 45}, std::tuple{13, 11, 230, 224}})
      for (int m : {5, 30, 70}) {
        const Scene scene = make_scene(type, lines, samples, bands, good, 21);
        const int nb = scene.nb();
        const std::string what = std::string(data_type_name(type)) + " nb " + std::to_string(nb) + " m " +
                                 std::to_string(m);
        const std::int64_t r0 = 1, r1 = lines - 1;
        DeviceTile tile(scene, r0, r1, 0);
        const std::int64_t rows = tile.view.core_pixels();
        const auto T64 = random_matrix(static_cast<std::size_t>(nb * m), 31, 1.0 / std::sqrt(nb));
        const std::vector<float> T(T64.begin(), T64.end());
        std::vector<double> mean, offset = random_matrix(static_cast<std::size_t>(m), 32, 10.0);
        for (int b : scene.good) mean.push_back(1000.0 + 5.0 * b + 0.125);
        const RefComponents want = ref_components(scene, r0, r1, mean, T, offset, m);

        DeviceBuffer<std::uint8_t> valid(static_cast<std::size_t>(tile.view.held_pixels()));
        HB_LAUNCH_OK(exclusion_mask(tile.view, tile.rules, valid.get(), nullptr));
        DeviceBuffer<float> dT(T), Z(static_cast<std::size_t>(rows * m));
        DeviceBuffer<double> d_mean(mean), d_offset(offset);
        DeviceBuffer<std::byte> ws(transform_sgemm_workspace_bytes(rows, nb));
        TransformOptions options;
        options.offset = d_offset.get();
        HB_LAUNCH_OK(transform_sgemm(handle.h, tile.view, tile.rules, valid.get(), d_mean.get(), dT.get(), m,
                                     Z.get(), options, ws.get(), ws.size(), nullptr));
        const auto z_sgemm = Z.download();
        expect_components(z_sgemm, want, m, 1e-5, "sgemm " + what);

        ASSERT_EQ(transform_const_fits(nb, m), !(nb == 224 && m == 70)) << what;  // 224 x 96 words: too big
        if (!transform_const_fits(nb, m)) continue;
        HB_LAUNCH_OK(transform_const_upload(dT.get(), d_mean.get(), d_offset.get(), nb, m, nullptr));
        Z.zero();
        HB_LAUNCH_OK(transform_const(tile.view, tile.rules, valid.get(), m, Z.get(), options.fill, nullptr));
        const auto z_const = Z.download();
        expect_components(z_const, want, m, 1e-5, "constant " + what);
        RefComponents sgemm_as_ref{std::vector<double>(z_sgemm.begin(), z_sgemm.end()), want.std};
        expect_components(z_const, sgemm_as_ref, m, 1e-5, "constant vs sgemm " + what);
      }
}

TEST(MnfTransform, DenoiseInverseMatchesFloat64) {
  HB_REQUIRE_DEVICE();
  CublasHandle handle;
  const std::int64_t rows = 3001;
  const int m = 12, k = 9, nb = 224;
  const auto Z64 = random_matrix(static_cast<std::size_t>(rows * m), 41, 50.0);
  std::vector<float> Z(Z64.begin(), Z64.end());
  std::vector<std::uint8_t> valid(static_cast<std::size_t>(rows), 1);
  for (std::int64_t p = 0; p < rows; p += 17) valid[static_cast<std::size_t>(p)] = 0;
  const auto Tinv64 = random_matrix(static_cast<std::size_t>(k * nb), 42, 1.0);
  const std::vector<float> Tinv(Tinv64.begin(), Tinv64.end());
  std::vector<double> mean(static_cast<std::size_t>(nb));
  for (int b = 0; b < nb; ++b) mean[static_cast<std::size_t>(b)] = 1000.0 + 3.0 * b;

  DeviceBuffer<float> dZ(Z), dTinv(Tinv), Y(static_cast<std::size_t>(rows * nb));
  DeviceBuffer<double> d_mean(mean);
  DeviceBuffer<std::uint8_t> d_valid(valid);
  HB_LAUNCH_OK(denoise_sgemm(handle.h, dZ.get(), rows, m, k, dTinv.get(), nb, d_mean.get(), d_valid.get(), Y.get(),
                             TransformOptions{}, nullptr));
  const auto y = Y.download();
  int reported = 0;
  for (std::int64_t p = 0; p < rows; ++p)
    for (int b = 0; b < nb; ++b) {
      const float got = y[static_cast<std::size_t>(p * nb + b)];
      if (!valid[static_cast<std::size_t>(p)]) {
        ASSERT_TRUE(std::isnan(got)) << "excluded pixel " << p;
        continue;
      }
      double want = 0.0, scale = 0.0;
      for (int j = 0; j < k; ++j) {
        const double t = static_cast<double>(Z[static_cast<std::size_t>(p * m + j)]) * Tinv[static_cast<std::size_t>(j * nb + b)];
        want += t;
        scale += std::fabs(t);
      }
      want += mean[static_cast<std::size_t>(b)];
      // FP32 products (1e-6 of the terms' size) plus the final rounding near the mean.
      const double bound = 1e-6 * scale + 1e-6 * std::fabs(want);
      if (!(std::fabs(got - want) <= bound) && reported++ < 5)
        ADD_FAILURE() << "Y[" << p << "][" << b << "] " << got << " vs " << want;
    }
}

}  // namespace
}  // namespace hb::kernels::mnf::test
