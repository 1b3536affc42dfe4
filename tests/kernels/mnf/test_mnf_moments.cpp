// Statistics-pass kernels against float64 references: exclusion mask, centred data
// matrix, noise residuals (exact), moments to 1e-12, and independence of tile size.
#include <gtest/gtest.h>

#include <string>

#include "kernels/mnf/moments.cuh"
#include "kernels/mnf/syrk.cuh"
#include "tests/kernels/mnf/mnf_test_support.hpp"

namespace hb::kernels::mnf::test {
namespace {

struct Shape {
  std::int64_t lines, samples, bands;
  int good;
};
const Shape kSmall{37, 29, 50, 45};
const Shape kWide{13, 11, 230, 224};

Scene scene_for(DataType type, const Shape& s) {
  return make_scene(type, s.lines, s.samples, s.bands, s.good, 7u + static_cast<unsigned>(s.bands));
}

std::vector<double> shift_for(const Scene& s) {
  std::vector<double> shift;
  for (int b : s.good) shift.push_back(1000.0 + 5.0 * b + 0.375);  // near, not at, the mean
  return shift;
}

// Elements of a and b that differ at all.
std::size_t mismatches(const std::vector<double>& a, const std::vector<double>& b) {
  std::size_t n = a.size() == b.size() ? 0 : 1 + a.size();
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) n += a[i] != b[i] ? 1 : 0;
  return n;
}

// Adds X's cross products to `stats` by the hand SYRK (workspace sized here).
void add_cross_tiled(const DeviceBuffer<double>& X, std::int64_t rows, int nb, const DeviceStats& stats) {
  DeviceBuffer<std::byte> ws(syrk_tiled_workspace_bytes(rows, nb));
  HB_LAUNCH_OK(syrk_tiled(X.get(), rows, nb, stats.cross.get(), ws.get(), ws.size(), nullptr));
}

void expect_moments(const DeviceStats& got, const RefMoments& want, int nb, const std::string& what) {
  EXPECT_EQ(got.count.download()[0], want.count) << what;
  expect_close(got.sum.download(), want.sum, want.sum_scale, 1e-12, (what + " sum").c_str());
  expect_close(got.cross.download(), want.cross, want.cross_scale, 1e-12, (what + " cross").c_str(), nb);
}

struct Case {
  DataType type;
  Shape shape;
};
const Case kCases[] = {{DataType::i16, kSmall}, {DataType::i16, kWide},
                       {DataType::f32, kSmall}, {DataType::f32, kWide}};

// Parameters are indices into kCases, so gtest and ctest print stable names.
class MnfMoments : public ::testing::TestWithParam<int> {
 protected:
  const Case& the_case() const { return kCases[GetParam()]; }
};

TEST_P(MnfMoments, MaskAndCentredMatrixMatchFloat64) {
  HB_REQUIRE_DEVICE();
  const auto [type, shape] = the_case();
  const Scene scene = scene_for(type, shape);
  const std::int64_t r0 = 2, r1 = shape.lines - 3;
  DeviceTile tile(scene, r0, r1, 1);
  const int nb = scene.nb();
  const std::int64_t rows = tile.view.core_pixels();

  DeviceBuffer<std::uint8_t> valid(static_cast<std::size_t>(tile.view.held_pixels()));
  HB_LAUNCH_OK(exclusion_mask(tile.view, tile.rules, valid.get(), nullptr));
  const auto mask = valid.download();
  for (std::int64_t h = 0; h < tile.view.held_pixels(); ++h)
    ASSERT_EQ(mask[static_cast<std::size_t>(h)] != 0,
              ref_valid(scene, tile.view.held_row0 + h / scene.samples, h % scene.samples)) << "pixel " << h;

  const auto shift = shift_for(scene);
  DeviceBuffer<double> d_shift(shift), X(static_cast<std::size_t>(rows * nb));
  DeviceBuffer<std::byte> ws(moments_workspace_bytes(rows, nb));
  DeviceStats stats(nb);
  HB_LAUNCH_OK(convert_center_f64(tile.view, tile.rules, valid.get(), d_shift.get(), X.get(), stats.moments(),
                                  ws.get(), ws.size(), nullptr));
  add_cross_tiled(X, rows, nb, stats);

  const auto want_X = ref_centered(scene, r0, r1, shift);
  EXPECT_EQ(mismatches(X.download(), want_X), 0u);  // same operation on the same doubles
  std::uint64_t valid_count = 0;
  for (std::int64_t r = r0; r < r1; ++r)
    for (std::int64_t c = 0; c < scene.samples; ++c) valid_count += ref_valid(scene, r, c) ? 1 : 0;
  expect_moments(stats, ref_moments(want_X, nb, valid_count), nb, "data");
}

TEST_P(MnfMoments, NoiseResidualsAreExact) {
  HB_REQUIRE_DEVICE();
  const auto [type, shape] = the_case();
  const Scene scene = scene_for(type, shape);
  const int nb = scene.nb();
  const NoiseWindow everywhere;
  NoiseWindow part;
  part.row_begin = 3;
  part.row_end = shape.lines - 2;
  part.col_begin = 2;
  part.col_end = shape.samples - 3;
  // Tiles at the top edge, in the middle, and at the bottom edge of the scene.
  const std::int64_t cuts[][2] = {{0, 4}, {4, shape.lines - 5}, {shape.lines - 5, shape.lines}};
  for (auto e : {estimator_id<DiffNoise>(), estimator_id<Mean3x3Noise>(), estimator_id<Median3x3Noise>()})
    for (const NoiseWindow* w : {&everywhere, static_cast<const NoiseWindow*>(&part)})
      for (const auto& cut : cuts) {
        const std::string what = "estimator " + std::to_string(static_cast<int>(e)) + " rows " +
                                 std::to_string(cut[0]) + ":" + std::to_string(cut[1]) +
                                 (w == &part ? " windowed" : "");
        DeviceTile tile(scene, cut[0], cut[1], 1);
        const std::int64_t rows = tile.view.core_pixels();
        DeviceBuffer<std::uint8_t> valid(static_cast<std::size_t>(tile.view.held_pixels()));
        HB_LAUNCH_OK(exclusion_mask(tile.view, tile.rules, valid.get(), nullptr));
        DeviceBuffer<double> R(static_cast<std::size_t>(rows * nb));
        DeviceBuffer<std::byte> ws(moments_workspace_bytes(rows, nb));
        DeviceStats stats(nb);
        HB_LAUNCH_OK(noise_residuals_f64(tile.view, tile.rules, valid.get(), e, *w, R.get(), stats.moments(),
                                         ws.get(), ws.size(), nullptr));
        add_cross_tiled(R, rows, nb, stats);
        std::uint64_t count = 0;
        const auto want_R = ref_residuals(scene, e, cut[0], cut[1], *w, count);
        EXPECT_EQ(mismatches(R.download(), want_R), 0u) << what;
        expect_moments(stats, ref_moments(want_R, nb, count), nb, what);
      }
}

std::string case_name(const ::testing::TestParamInfo<int>& info) {
  const auto& [type, s] = kCases[info.param];
  return std::string(data_type_name(type)) + "_" + std::to_string(s.lines) + "x" + std::to_string(s.samples) +
         "x" + std::to_string(s.bands) + "_nb" + std::to_string(s.good);
}

INSTANTIATE_TEST_SUITE_P(Types, MnfMoments, ::testing::Range(0, 4), case_name);

// Moments summed over tiles of 1, 5 and all rows equal the whole scene's, for the data
// and for two noise estimators (their halos cross every tile boundary).
TEST(MnfMomentsTiling, TileSizeDoesNotChangeTheMoments) {
  HB_REQUIRE_DEVICE();
  const Scene scene = scene_for(DataType::i16, kSmall);
  const int nb = scene.nb();
  const auto shift = shift_for(scene);
  DeviceBuffer<double> d_shift(shift);
  for (int kind = 0; kind < 3; ++kind) {
    const auto e = kind == 1 ? estimator_id<DiffNoise>() : estimator_id<Median3x3Noise>();
    std::uint64_t count = 0;
    const auto whole = kind == 0 ? ref_centered(scene, 0, scene.lines, shift)
                                 : ref_residuals(scene, e, 0, scene.lines, NoiseWindow{}, count);
    if (kind == 0)
      for (std::int64_t r = 0; r < scene.lines; ++r)
        for (std::int64_t c = 0; c < scene.samples; ++c) count += ref_valid(scene, r, c) ? 1 : 0;
    const RefMoments want = ref_moments(whole, nb, count);
    for (std::int64_t tile_rows : {std::int64_t{1}, std::int64_t{5}, scene.lines}) {
      DeviceStats stats(nb);
      for (std::int64_t r0 = 0; r0 < scene.lines; r0 += tile_rows) {
        DeviceTile tile(scene, r0, std::min(scene.lines, r0 + tile_rows), 1);
        const std::int64_t rows = tile.view.core_pixels();
        DeviceBuffer<std::uint8_t> valid(static_cast<std::size_t>(tile.view.held_pixels()));
        HB_LAUNCH_OK(exclusion_mask(tile.view, tile.rules, valid.get(), nullptr));
        DeviceBuffer<double> M(static_cast<std::size_t>(rows * nb));
        DeviceBuffer<std::byte> ws(moments_workspace_bytes(rows, nb));
        if (kind == 0)
          HB_LAUNCH_OK(convert_center_f64(tile.view, tile.rules, valid.get(), d_shift.get(), M.get(),
                                          stats.moments(), ws.get(), ws.size(), nullptr));
        else
          HB_LAUNCH_OK(noise_residuals_f64(tile.view, tile.rules, valid.get(), e, NoiseWindow{}, M.get(),
                                           stats.moments(), ws.get(), ws.size(), nullptr));
        add_cross_tiled(M, rows, nb, stats);
      }
      expect_moments(stats, want, nb, "kind " + std::to_string(kind) + " tile rows " + std::to_string(tile_rows));
    }
  }
}

// Argument checks run on the host before anything is enqueued: these pass without a GPU.
TEST(MnfMomentsArguments, RefusesBadArguments) {
  TileView tile;
  tile.samples = 4;
  tile.bands = 3;
  tile.lines = 10;
  tile.held_row0 = 2;
  tile.held_rows = 3;
  tile.core_row0 = 2;
  tile.core_rows = 3;
  int fake_int = 0;
  std::uint8_t fake_mask = 0;
  tile.data = &fake_int;
  PixelRules rules{&fake_int, 0, false, 0.0};
  EXPECT_NE(exclusion_mask(tile, rules, &fake_mask, nullptr).bad_argument, nullptr);  // nb = 0
  rules.nb = 4;
  EXPECT_NE(exclusion_mask(tile, rules, &fake_mask, nullptr).bad_argument, nullptr);  // nb > bands
  rules.nb = 2;
  unsigned long long count = 0;
  double sum[2] = {};
  const DeviceMoments m{&count, sum, nullptr};
  // diff needs the row below the core (row 5 < lines) and this tile does not hold it.
  const auto s = noise_residuals_f64(tile, rules, &fake_mask, estimator_id<DiffNoise>(), NoiseWindow{}, sum, m,
                                     &fake_int, 1u << 20, nullptr);
  ASSERT_NE(s.bad_argument, nullptr);
  EXPECT_NE(std::string(s.bad_argument).find("halo"), std::string::npos);
  // A workspace smaller than moments_workspace_bytes() is refused.
  EXPECT_NE(convert_center_f64(tile, rules, &fake_mask, sum, sum, m, &fake_int, 0, nullptr).bad_argument, nullptr);
}

}  // namespace
}  // namespace hb::kernels::mnf::test
