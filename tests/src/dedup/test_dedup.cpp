// Duplicate spectra (src/dedup): exact byte equality, the inverse map, GPU = CPU (rows
// uploaded, or already on the GPU), the auto rule, and KNN class maps identical with and
// without dedup on both backends.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <random>

#include "tests/src/knn/knn_test_support.hpp"
#include "src/classify/sampling.hpp"
#include "src/classify/scene_pass.hpp"
#include "src/dedup/dedup.hpp"
#include "src/knn/classify.hpp"
#if defined(HB_HAVE_CUDA)
#include "kernels/hash/detail/device_array.hpp"
#endif

namespace hb::dedup {
namespace {

constexpr std::int64_t kDims = 7;

// n rows drawn from `distinct` random spectra.
std::vector<float> rows_with_repeats(std::int64_t n, int distinct, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> value(0.f, 100.f);
  std::vector<float> pool(static_cast<std::size_t>(distinct * kDims));
  for (auto& v : pool) v = value(rng);
  std::vector<float> rows;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto pick = static_cast<std::int64_t>(rng() % static_cast<unsigned>(distinct));
    rows.insert(rows.end(), pool.begin() + pick * kDims, pool.begin() + (pick + 1) * kDims);
  }
  return rows;
}

void expect_exact_partition(const std::vector<float>& rows, const Duplicates& d) {
  std::map<std::vector<float>, std::int64_t> first;  // bytes of finite rows compare as values here
  for (std::int64_t i = 0; i < d.rows(); ++i) {
    std::vector<float> row(rows.begin() + i * kDims, rows.begin() + (i + 1) * kDims);
    const auto [it, fresh] = first.emplace(row, i);
    const std::int64_t u = d.inverse[static_cast<std::size_t>(i)];
    ASSERT_EQ(d.unique_rows[static_cast<std::size_t>(u)], it->second) << "row " << i;
    if (fresh) { ASSERT_EQ(d.unique_rows[static_cast<std::size_t>(u)], i); }
  }
  EXPECT_EQ(d.uniques(), static_cast<std::int64_t>(first.size()));
}

TEST(Dedup, InverseMapsEveryRowToItsFirstCopy) {
  const auto rows = rows_with_repeats(20000, 300, 1);
  auto d = find_duplicates(rows, kDims, BackendKind::cpu);
  ASSERT_TRUE(d.ok());
  expect_exact_partition(rows, *d);
  EXPECT_NEAR(d->duplicate_share(), 1.0 - 300.0 / 20000.0, 1e-9);
  auto kept = rows;
  keep_unique_rows(kept, kDims, *d);
  ASSERT_EQ(kept.size(), d->unique_rows.size() * kDims);
  for (std::int64_t i = 0; i < d->rows(); ++i)
    for (std::int64_t e = 0; e < kDims; ++e)
      ASSERT_EQ(kept[static_cast<std::size_t>(d->inverse[static_cast<std::size_t>(i)] * kDims + e)],
                rows[static_cast<std::size_t>(i * kDims + e)]);
}

TEST(Dedup, EqualityIsByBytes) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> rows = {0.f, 1.f, -0.f, 1.f, nan, 2.f, nan, 2.f, 0.f, 1.f};  // dims 2
  auto d = find_duplicates(rows, 2, BackendKind::cpu);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->inverse, (std::vector<std::int64_t>{0, 1, 2, 2, 0}));  // -0 differs from 0; equal NaN bits merge
}

TEST(Dedup, GpuTableGivesTheCpuResult) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: the GPU table runs on the device";
  const auto rows = rows_with_repeats(200000, 5000, 2);
  auto cpu = find_duplicates(rows, kDims, BackendKind::cpu);
  auto gpu = find_duplicates(rows, kDims, BackendKind::cuda);
  ASSERT_TRUE(cpu.ok());
  ASSERT_TRUE(gpu.ok()) << gpu.error().line();
  EXPECT_EQ(gpu->unique_rows, cpu->unique_rows);
  EXPECT_EQ(gpu->inverse, cpu->inverse);
}

// Rows already in GPU memory (a KNN tile's gathered queries) give the same partition,
// and never come home when no two different spectra share a fingerprint.
TEST(Dedup, RowsOnTheGpuGiveTheCpuResultWithoutComingHome) {
#if !defined(HB_HAVE_CUDA)
  GTEST_SKIP() << "no CUDA backend in this build";
#else
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: the GPU table runs on the device";
  const auto rows = rows_with_repeats(200000, 5000, 3);
  hash::detail::DeviceArray<float> on_device;
  ASSERT_TRUE(on_device.upload(rows).ok());
  bool fetched = false;
  const auto host_rows = [&]() -> Result<std::span<const float>> {
    fetched = true;
    return std::span<const float>(rows);
  };
  auto gpu = find_duplicates_on_device(on_device.data, static_cast<std::int64_t>(rows.size()) / kDims, kDims, host_rows);
  auto cpu = find_duplicates(rows, kDims, BackendKind::cpu);
  ASSERT_TRUE(gpu.ok()) << gpu.error().line();
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(gpu->unique_rows, cpu->unique_rows);
  EXPECT_EQ(gpu->inverse, cpu->inverse);
  EXPECT_FALSE(fetched);
#endif
}

// Distinct rows on the GPU: only their count comes home, no list is made, and keeping
// the unique rows keeps them all.
TEST(Dedup, DistinctRowsOnTheGpuAreCountedNotListed) {
#if !defined(HB_HAVE_CUDA)
  GTEST_SKIP() << "no CUDA backend in this build";
#else
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device: the GPU table runs on the device";
  auto rows = rows_with_repeats(200000, 5000, 4);
  for (std::size_t i = 0; i < rows.size(); i += kDims) rows[i] = static_cast<float>(i);  // each row its own
  hash::detail::DeviceArray<float> on_device;
  ASSERT_TRUE(on_device.upload(rows).ok());
  const auto host_rows = []() -> Result<std::span<const float>> { return Error{ErrorKind::internal, {}, "test", "fetched"}; };
  const auto n = static_cast<std::int64_t>(rows.size()) / kDims;
  auto gpu = find_duplicates_on_device(on_device.data, n, kDims, host_rows);
  ASSERT_TRUE(gpu.ok()) << gpu.error().line();
  EXPECT_EQ(gpu->rows(), n);
  EXPECT_EQ(gpu->uniques(), n);
  EXPECT_EQ(gpu->duplicate_share(), 0.0);
  EXPECT_TRUE(gpu->unique_rows.empty() && gpu->inverse.empty());
  auto kept = rows;
  keep_unique_rows(kept, kDims, *gpu);
  EXPECT_EQ(kept, rows);
  auto cpu = find_duplicates(rows, kDims, BackendKind::cpu);
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->uniques(), n);
#endif
}

TEST(Dedup, AutoRuleProbesThenFollowsTheShare) {
  Duplicates none, many;
  none.unique_rows = {0, 1, 2, 3};
  none.inverse = {0, 1, 2, 3};
  many.unique_rows = {0};
  many.inverse = {0, 0, 0, 0};
  AutoRule rule(Mode::automatic);
  ASSERT_TRUE(rule.use_for_next_tile());  // the probe
  rule.observe(none);
  // Off, then probed after kReprobeTiles tiles, and after twice as many each time a
  // probe finds nothing.
  std::vector<int> probes;
  for (int t = 1; t <= 7 * AutoRule::kReprobeTiles; ++t)
    if (rule.use_for_next_tile()) {
      probes.push_back(t);
      rule.observe(none);
    }
  const int w = AutoRule::kReprobeTiles;
  EXPECT_EQ(probes, (std::vector<int>{w, 3 * w, 7 * w}));
  ASSERT_FALSE(rule.use_for_next_tile());
  for (int t = 0; t < 8 * w && !rule.use_for_next_tile(); ++t) {}
  rule.observe(many);  // a probe that finds duplicates: on again, and the wait starts over
  EXPECT_TRUE(rule.use_for_next_tile());
  rule.observe(none);
  int used = 0;
  for (int t = 0; t < w; ++t) used += rule.use_for_next_tile();
  EXPECT_EQ(used, 1);
  EXPECT_FALSE(AutoRule(Mode::off).use_for_next_tile());
  EXPECT_TRUE(AutoRule(Mode::on).use_for_next_tile());
}

// A scene whose top rows are a fill value the header does not declare (so they are
// classified) and with a patch of saturated pixels: many exact duplicates.
struct Scene {
  std::unique_ptr<knn::test::MemoryCube> cube;
  std::vector<std::uint16_t> truth;
};

Scene make_scene() {
  constexpr std::int64_t lines = 36, samples = 24, bands = 9;
  std::mt19937 rng(8);
  std::uniform_int_distribution<int> noise(-60, 60);
  std::vector<std::int16_t> values;
  Scene s;
  for (std::int64_t line = 0; line < lines; ++line)
    for (std::int64_t sample = 0; sample < samples; ++sample) {
      const int label = static_cast<int>(sample / 8) + 1;
      const bool fill = line < 10, saturated = line > 25 && sample > 14 && sample < 20;
      s.truth.push_back(fill ? 0 : static_cast<std::uint16_t>(label));
      for (std::int64_t b = 0; b < bands; ++b)
        values.push_back(static_cast<std::int16_t>(fill ? -50 : saturated ? 32767 : 900 * label + 50 * b * (label % 2 ? 1 : -1) + noise(rng)));
    }
  io::CubeInfo info;
  info.shape = {lines, samples, bands};
  info.type = DataType::i16;
  s.cube = std::make_unique<knn::test::MemoryCube>(info, knn::test::to_bytes(values));
  return s;
}

struct Output {
  std::vector<std::uint16_t> labels;
  std::vector<float> confidence;
  std::vector<std::int64_t> neighbor_index;
  std::vector<float> neighbor_distance;
  knn::ClassifyStats stats;
  std::vector<double> pixel_norm2, train_norm2;  // squared norms of the features
};

std::vector<double> squared_norms(std::span<const float> rows, std::int64_t dims) {
  std::vector<double> n(rows.size() / static_cast<std::size_t>(dims), 0.0);
  for (std::size_t i = 0; i < rows.size(); ++i) n[i / static_cast<std::size_t>(dims)] += double(rows[i]) * rows[i];
  return n;
}

Output classify(const Scene& scene, Mode mode, knn::Metric metric,
                knn::SinkThread thread = knn::SinkThread::caller, BackendKind backend = BackendKind::cpu) {
  const auto selection = classify::select_good_bands(scene.cube->info());
  auto valid = classify::validity_mask(*scene.cube, selection, 5);
  const auto split = *classify::stratified_split(scene.truth, *valid, {std::nullopt, 6, 3});
  auto features = classify::gather_features(*scene.cube, selection, split.train, 5);
  std::vector<std::int64_t> every(static_cast<std::size_t>(scene.cube->info().shape.pixels()));
  std::iota(every.begin(), every.end(), 0);
  Output out;
  out.train_norm2 = squared_norms(*features, selection.dims());
  out.pixel_norm2 = squared_norms(*classify::gather_features(*scene.cube, selection, every, 5), selection.dims());
  classify::TrainingSet training;
  training.features = classify::memory_training_source(*features, selection.dims(), "scene");
  for (const auto p : split.train) training.labels.push_back(scene.truth[static_cast<std::size_t>(p)]);
  auto prepared = knn::PreparedTraining::prepare(*training.features, metric, std::int64_t{1} << 30);
  prepared->set_chunk_rows(7);
  knn::ClassifyOptions options;
  options.k = 5;
  options.metric = metric;
  options.tile_rows = 8;
  options.neighbors = true;
  options.dedup = mode;
  options.backend = backend;
  const knn::RowSink sink = [&](const knn::ClassifiedRows& rows) -> Status {
    out.labels.insert(out.labels.end(), rows.labels.begin(), rows.labels.end());
    out.confidence.insert(out.confidence.end(), rows.confidence.begin(), rows.confidence.end());
    out.neighbor_index.insert(out.neighbor_index.end(), rows.neighbor_index.begin(), rows.neighbor_index.end());
    out.neighbor_distance.insert(out.neighbor_distance.end(), rows.neighbor_distance.begin(), rows.neighbor_distance.end());
    return {};
  };
  auto stats = knn::classify_scene(*scene.cube, selection, training, *prepared, options, sink, {}, thread);
  EXPECT_TRUE(stats.ok()) << (stats.ok() ? "" : stats.error().line());
  if (stats.ok()) out.stats = *stats;
  return out;
}

// Tiles written behind the search (a background thread spreads the votes and calls the
// sink) give the same bits as writing in the caller's thread, duplicates included.
TEST(DedupKnn, WritingBehindTheSearchChangesNoOutput) {
  const auto scene = make_scene();
  for (const auto mode : {Mode::off, Mode::on}) {
    const auto caller = classify(scene, mode, knn::Metric::euclidean);
    const auto behind = classify(scene, mode, knn::Metric::euclidean, knn::SinkThread::any);
    EXPECT_EQ(behind.stats.duplicates, caller.stats.duplicates);
    EXPECT_EQ(behind.labels, caller.labels);
    EXPECT_EQ(behind.confidence, caller.confidence);
    EXPECT_EQ(behind.neighbor_index, caller.neighbor_index);
    ASSERT_EQ(behind.neighbor_distance.size(), caller.neighbor_distance.size());
    EXPECT_EQ(std::memcmp(behind.neighbor_distance.data(), caller.neighbor_distance.data(),
                          caller.neighbor_distance.size() * sizeof(float)), 0);  // NaN slots included
  }
}

TEST(DedupKnn, ClassMapsAreIdenticalWithAndWithoutDedup) {
  const auto scene = make_scene();
  for (const auto metric : {knn::Metric::euclidean, knn::Metric::cosine}) {
    const auto off = classify(scene, Mode::off, metric);
    const auto on = classify(scene, Mode::on, metric);
    const auto automatic = classify(scene, Mode::automatic, metric);
    EXPECT_EQ(off.stats.duplicates, 0);
    // 10 fill lines of 24 pixels and a 10 x 5 saturated patch: all but one of each repeat.
    EXPECT_EQ(on.stats.duplicates, (10 * 24 - 2) + (10 * 5 - 2));  // fill and patch span two tiles each
    for (const auto* run : {&on, &automatic}) {
      EXPECT_EQ(run->labels, off.labels);
      EXPECT_EQ(run->confidence, off.confidence);
      EXPECT_EQ(run->neighbor_index, off.neighbor_index);
      // Distances agree to the rounding of the FP32 expansion |q|^2 + |t|^2 - 2 q.t,
      // which scales with the norms, not the distance: OpenBLAS's AVX-512 SGEMM rounds
      // a row differently with the number of query rows (fewer with dedup), as it does
      // with the training chunk size (test_knn_scene, ChunkSizeChangesNothingButNearTies).
      ASSERT_EQ(run->neighbor_distance.size(), off.neighbor_distance.size());
      for (std::size_t i = 0; i < off.neighbor_distance.size(); ++i) {
        const double a = run->neighbor_distance[i], b = off.neighbor_distance[i];
        const double norms = off.pixel_norm2[i / 5] + off.train_norm2[static_cast<std::size_t>(off.neighbor_index[i])];
        if (metric == knn::Metric::euclidean) {
          ASSERT_LE(std::abs(a * a - b * b), 1e-5 * norms) << "neighbour " << i;  // FP32: 6e-8
        } else {
          ASSERT_NEAR(a, b, 1e-5) << "neighbour " << i;
        }
      }
    }
  }
}

// On a GPU the int16 tiles' queries are gathered on the device and the dedup probes
// look at them there (find_duplicates_on_device): the same duplicates are found, and
// the class maps are those of the search without dedup.
TEST(DedupKnn, GpuClassMapsAreIdenticalWithAndWithoutDedup) {
  if (cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const auto scene = make_scene();
  for (const auto metric : {knn::Metric::euclidean, knn::Metric::cosine}) {
    const auto off = classify(scene, Mode::off, metric, knn::SinkThread::any, BackendKind::cuda);
    const auto on = classify(scene, Mode::on, metric, knn::SinkThread::any, BackendKind::cuda);
    const auto automatic = classify(scene, Mode::automatic, metric, knn::SinkThread::any, BackendKind::cuda);
    EXPECT_EQ(on.stats.backend, "cuda");
    EXPECT_EQ(off.stats.duplicates, 0);
    EXPECT_EQ(on.stats.duplicates, (10 * 24 - 2) + (10 * 5 - 2));
    EXPECT_GT(automatic.stats.duplicates, 0);
    for (const auto* run : {&on, &automatic}) {
      EXPECT_EQ(run->labels, off.labels);
      EXPECT_EQ(run->neighbor_index, off.neighbor_index);
    }
  }
}

}  // namespace
}  // namespace hb::dedup
