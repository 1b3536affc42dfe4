// The scene driver on an in-memory scene with clear clusters: split, gather, classify
// tile by tile, vote; bad bands are dropped and no-data pixels stay class 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>

#include "tests/src/knn/knn_test_support.hpp"
#include "src/base/data_type.hpp"
#include "src/classify/accuracy.hpp"
#include "src/classify/class_raster.hpp"
#include "src/classify/evaluation.hpp"
#include "src/classify/sampling.hpp"
#include "src/classify/scene_pass.hpp"
#include "src/knn/classify.hpp"
#include "src/knn/outputs.hpp"
#include "src/knn/run.hpp"

namespace hb::knn {
namespace {

constexpr std::int64_t kLines = 40, kSamples = 30, kBands = 12, kBadBand = 5;
constexpr std::int16_t kNoData = -9999;

// Three classes in vertical stripes of 10 samples, distinct spectra plus noise; band 5
// is marked bad and holds huge noise that would swamp the classes if it were used;
// line 5, samples 0..4 are no-data. Line 0 is unlabelled.
struct Scene {
  std::unique_ptr<test::MemoryCube> cube;
  std::vector<std::uint16_t> truth;
};

Scene make_scene() {
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> noise(-30, 30), garbage(-20000, 20000);
  std::vector<std::int16_t> values;
  Scene s;
  for (std::int64_t line = 0; line < kLines; ++line)
    for (std::int64_t sample = 0; sample < kSamples; ++sample) {
      const int label = static_cast<int>(sample / 10) + 1;
      s.truth.push_back(line == 0 ? 0 : static_cast<std::uint16_t>(label));
      for (std::int64_t b = 0; b < kBands; ++b) {
        int v = 1000 * label + static_cast<int>(b) * (label == 2 ? -40 : 60) + noise(rng);
        if (b == kBadBand) v = garbage(rng);
        if (line == 5 && sample < 5) v = kNoData;
        values.push_back(static_cast<std::int16_t>(v));
      }
    }
  io::CubeInfo info;
  info.shape = {kLines, kSamples, kBands};
  info.type = DataType::i16;
  info.meta.bbl.assign(kBands, 1);
  info.meta.bbl[kBadBand] = 0;
  info.meta.data_ignore_value = kNoData;
  s.cube = std::make_unique<test::MemoryCube>(info, test::to_bytes(values));
  return s;
}

struct Captured {
  std::vector<std::uint16_t> labels;
  std::vector<float> confidence;
  std::vector<std::int64_t> neighbor_index;
  std::vector<float> neighbor_distance;
};

struct Run {
  Captured out;
  ClassifyStats stats;
  classify::Split split;
  std::vector<float> training_features;
  classify::ConfusionMatrix tally;  // EvaluationTally's, as rows came out
};

Run classify(const Scene& scene, ClassifyOptions options, std::int64_t chunk_rows, std::int64_t cache_bytes) {
  Run run;
  const auto selection = classify::select_good_bands(scene.cube->info());
  auto valid = classify::validity_mask(*scene.cube, selection, 7);
  EXPECT_TRUE(valid.ok());
  run.split = *classify::stratified_split(scene.truth, *valid, {std::nullopt, 15, 1});
  auto features = classify::gather_features(*scene.cube, selection, run.split.train, 7);
  run.training_features = *features;
  classify::TrainingSet training;
  training.features = classify::memory_training_source(*features, selection.dims(), "scene");
  for (const auto p : run.split.train) training.labels.push_back(scene.truth[static_cast<std::size_t>(p)]);
  auto prepared = PreparedTraining::prepare(*training.features, options.metric, cache_bytes);
  EXPECT_TRUE(prepared.ok());
  prepared->set_chunk_rows(chunk_rows);
  classify::EvaluationTally tally(scene.truth, run.split.train, 0, kSamples);
  const RowSink sink = [&](const ClassifiedRows& rows) -> Status {
    tally.add(rows.rows, rows.labels, rows.classified);
    run.out.labels.insert(run.out.labels.end(), rows.labels.begin(), rows.labels.end());
    run.out.confidence.insert(run.out.confidence.end(), rows.confidence.begin(), rows.confidence.end());
    run.out.neighbor_index.insert(run.out.neighbor_index.end(), rows.neighbor_index.begin(), rows.neighbor_index.end());
    run.out.neighbor_distance.insert(run.out.neighbor_distance.end(), rows.neighbor_distance.begin(),
                                     rows.neighbor_distance.end());
    return {};
  };
  auto stats = classify_scene(*scene.cube, selection, training, *prepared, options, sink);
  EXPECT_TRUE(stats.ok()) << (stats.ok() ? "" : stats.error().line());
  if (stats.ok()) run.stats = *stats;
  run.tally = tally.matrix();
  return run;
}

ClassifyOptions options_k(int k) {
  ClassifyOptions o;
  o.k = k;
  o.tile_rows = 7;  // 40 lines: the last tile is short
  o.neighbors = true;
  return o;
}

bool is_no_data(std::int64_t p) { return p / kSamples == 5 && p % kSamples < 5; }

TEST(KnnScene, ClearClustersAreClassifiedAlmostPerfectly) {
  const auto scene = make_scene();
  const auto run = classify(scene, options_k(5), 8192, std::int64_t{1} << 30);
  ASSERT_EQ(run.out.labels.size(), static_cast<std::size_t>(kLines * kSamples));
  classify::ConfusionMatrix matrix(4);
  for (const auto p : run.split.eval)
    matrix.add(scene.truth[static_cast<std::size_t>(p)], run.out.labels[static_cast<std::size_t>(p)]);
  const auto s = classify::summarize(matrix);
  EXPECT_EQ(s.total, static_cast<std::int64_t>(run.split.eval.size()));
  EXPECT_GE(s.overall, 0.995);
  EXPECT_GE(s.kappa, 0.99);
  EXPECT_EQ(run.split.train.size(), 45u);
  // The tally kept as rows come out (no validity mask) counts the same pixels.
  ASSERT_EQ(run.tally.classes(), matrix.classes());
  for (int t = 0; t < matrix.classes(); ++t)
    for (int p = 0; p < matrix.classes(); ++p) EXPECT_EQ(run.tally.at(t, p), matrix.at(t, p)) << t << ", " << p;
}

// Validity read pixel by pixel (what the checked draw asks) equals the mask's, and the
// checked draw gives the split's training pixels.
TEST(KnnScene, PixelValidityEqualsTheMaskAndTheCheckedDrawTheSplit) {
  const auto scene = make_scene();
  const auto selection = classify::select_good_bands(scene.cube->info());
  const auto mask = classify::validity_mask(*scene.cube, selection, 7);
  ASSERT_TRUE(mask.ok());
  std::vector<std::int64_t> pixels;
  for (std::int64_t p = 0; p < kLines * kSamples; p += 3) pixels.push_back(p);
  for (const std::int64_t p : {std::int64_t{150}, std::int64_t{152}, std::int64_t{154}}) pixels.push_back(p);  // no-data
  std::sort(pixels.begin(), pixels.end());
  pixels.erase(std::unique(pixels.begin(), pixels.end()), pixels.end());
  for (const std::int64_t tile_rows : {1, 7, 100}) {
    const auto flags = classify::pixel_validity(*scene.cube, selection, pixels, tile_rows);
    ASSERT_TRUE(flags.ok());
    for (std::size_t i = 0; i < pixels.size(); ++i)
      EXPECT_EQ((*flags)[i], (*mask)[static_cast<std::size_t>(pixels[i])]) << "pixel " << pixels[i];
  }
  const classify::SplitOptions options{std::nullopt, 15, 1};
  const auto drawn = classify::draw_per_class(scene.truth, options, [&](std::span<const std::int64_t> asked) {
    return classify::pixel_validity(*scene.cube, selection, asked, 7);
  });
  ASSERT_TRUE(drawn.ok());
  EXPECT_EQ(*drawn, classify::stratified_split(scene.truth, *mask, options)->train);
}

TEST(KnnScene, NoDataPixelsStayUnclassifiedAndOutOfTheSplit) {
  const auto scene = make_scene();
  const auto run = classify(scene, options_k(3), 8192, std::int64_t{1} << 30);
  EXPECT_EQ(run.stats.ignored, 5);
  EXPECT_EQ(run.stats.classified, kLines * kSamples - 5);
  for (std::int64_t p = 0; p < kLines * kSamples; ++p) {
    const auto i = static_cast<std::size_t>(p);
    if (is_no_data(p)) {
      EXPECT_EQ(run.out.labels[i], 0);
      EXPECT_EQ(run.out.confidence[i], 0.0f);
      EXPECT_EQ(run.out.neighbor_index[i * 3], -1);
      EXPECT_TRUE(std::isnan(run.out.neighbor_distance[i * 3]));
    } else {
      EXPECT_NE(run.out.labels[i], 0) << "pixel " << p;
      EXPECT_GT(run.out.confidence[i], 0.0f);
    }
  }
  for (const auto p : run.split.train) EXPECT_FALSE(is_no_data(p));
  for (const auto p : run.split.eval) EXPECT_FALSE(is_no_data(p));
}

// Training rows are the scene spectra without the bad band, and the reported
// neighbour distances are Euclidean distances to those rows.
TEST(KnnScene, GatheredFeaturesAndNeighbourDistancesMatchTheRawSpectra) {
  const auto scene = make_scene();
  const auto run = classify(scene, options_k(4), 8192, std::int64_t{1} << 30);
  const auto dims = kBands - 1;
  std::vector<std::byte> raw(static_cast<std::size_t>(scene.cube->info().total_bytes()));
  ASSERT_TRUE(scene.cube->read_rows({0, kLines}, raw).ok());
  const auto* values = reinterpret_cast<const std::int16_t*>(raw.data());
  auto spectrum = [&](std::int64_t p) {
    std::vector<float> f;
    for (std::int64_t b = 0; b < kBands; ++b)
      if (b != kBadBand) f.push_back(values[p * kBands + b]);
    return f;
  };
  for (std::size_t t = 0; t < run.split.train.size(); ++t) {
    const auto want = spectrum(run.split.train[t]);
    const std::vector<float> got(run.training_features.begin() + static_cast<std::ptrdiff_t>(t) * dims,
                                 run.training_features.begin() + static_cast<std::ptrdiff_t>(t + 1) * dims);
    ASSERT_EQ(got, want) << "training row " << t;
  }
  // FP32 |q|^2 + |t|^2 - 2 q.t errs by a few ulps of the centred squared norms.
  std::vector<double> mean(static_cast<std::size_t>(dims), 0.0);
  for (std::size_t i = 0; i < run.training_features.size(); ++i)
    mean[i % static_cast<std::size_t>(dims)] += run.training_features[i] / static_cast<double>(run.split.train.size());
  auto centred_norm = [&](const std::vector<float>& x) {
    double sum = 0.0;
    for (std::size_t b = 0; b < x.size(); ++b) sum += (x[b] - mean[b]) * (x[b] - mean[b]);
    return sum;
  };
  for (const std::int64_t p : {31, 300, 777, 1199}) {
    const auto q = spectrum(p);
    for (int j = 0; j < 4; ++j) {
      const auto idx = run.out.neighbor_index[static_cast<std::size_t>(p * 4 + j)];
      const auto t = spectrum(run.split.train[static_cast<std::size_t>(idx)]);
      const double want = test::squared_distance64(q.data(), t.data(), dims);
      const double got = run.out.neighbor_distance[static_cast<std::size_t>(p * 4 + j)];
      EXPECT_NEAR(got * got, want, 1e-6 * (centred_norm(q) + centred_norm(t))) << "pixel " << p << " rank " << j;
    }
  }
}

// Streaming the training rows chunk by chunk from their source is the same computation
// as holding them: bit-identical results, whatever the selection method.
TEST(KnnScene, StreamedTrainingGivesBitIdenticalResults) {
  const auto scene = make_scene();
  for (const auto method : {SelectMethod::automatic, SelectMethod::kmin, SelectMethod::fast}) {
    auto options = options_k(6);
    options.select = method;
    const auto cached = classify(scene, options, 13, std::int64_t{1} << 30);
    const auto streamed = classify(scene, options, 13, 0);
    const std::string what(select_method_name(method));
    EXPECT_EQ(cached.out.labels, streamed.out.labels) << what;
    EXPECT_EQ(cached.out.neighbor_index, streamed.out.neighbor_index) << what;
    EXPECT_EQ(cached.out.confidence, streamed.out.confidence) << what;
  }
}

// Every method that finishes the SGEMM's inner products gives the same lists, training
// held or streamed in chunks of 13 rows: the features (spectra less the training mean)
// tie often, and every method gives a tie to the lower index. Not tensor: its exact
// products are FMA chains in band order, and here, on a GPU, cuBLAS's SGEMM summed
// another way, so a pair came out 2 apart at rank 3 (its distances were 5784 and 5786).
// Nor auto on a GPU, which runs tensor's scan path here (12 bands: src/knn/README.md);
// on the CPU auto runs fast.
TEST(KnnScene, EverySelectionMethodGivesTheSameLists) {
  const auto scene = make_scene();
  auto reference_options = options_k(6);
  reference_options.select = SelectMethod::kmin;
  const auto reference = classify(scene, reference_options, 13, 0);
  const auto& want = reference.out.neighbor_index;
  for (const auto method : {SelectMethod::kmin, SelectMethod::bitonic, SelectMethod::fast})
    for (const std::int64_t cache : {std::int64_t{0}, std::int64_t{1} << 30}) {
      auto options = options_k(6);
      options.select = method;
      const auto run = classify(scene, options, 13, cache);
      const auto& got = run.out.neighbor_index;
      ASSERT_EQ(got.size(), want.size());
      const auto i = static_cast<std::size_t>(std::mismatch(got.begin(), got.end(), want.begin()).first - got.begin());
      const auto list = [i](const knn::Run& r) {
        std::string text;
        for (std::size_t j = i / 6 * 6; j < i / 6 * 6 + 6; ++j)
          text += " " + std::to_string(r.out.neighbor_index[j]) + " (" + std::to_string(r.out.neighbor_distance[j]) + ")";
        return text;
      };
      EXPECT_EQ(i, got.size()) << select_method_name(method) << (cache ? ", held" : ", streamed") << ": pixel "
                               << i / 6 << ", neighbour " << i % 6 << ":" << list(run) << "; kmin's:" << list(reference);
      ASSERT_EQ(run.out.neighbor_distance.size(), reference.out.neighbor_distance.size());
      EXPECT_EQ(std::memcmp(run.out.neighbor_distance.data(), reference.out.neighbor_distance.data(),
                            run.out.neighbor_distance.size() * sizeof(float)),
                0)
          << select_method_name(method) << ": the distances' bits (no-data pixels' NaN included)";
    }
}

// Other chunk sizes change how the GEMM rounds (OpenBLAS blocks by shape), so only
// neighbours at equal distance up to that rounding may trade places.
TEST(KnnScene, ChunkSizeChangesNothingButNearTies) {
  const auto scene = make_scene();
  const auto whole = classify(scene, options_k(6), 8192, std::int64_t{1} << 30);
  const auto chunked = classify(scene, options_k(6), 13, std::int64_t{1} << 30);
  EXPECT_EQ(whole.out.labels, chunked.out.labels);
  for (std::size_t i = 0; i < whole.out.neighbor_index.size(); ++i) {
    if (whole.out.neighbor_index[i] == chunked.out.neighbor_index[i]) continue;
    EXPECT_NEAR(whole.out.neighbor_distance[i], chunked.out.neighbor_distance[i], 1e-3 * whole.out.neighbor_distance[i])
        << "slot " << i;
  }
}

TEST(KnnScene, KLargerThanTheTrainingSetIsAClearError) {
  const auto scene = make_scene();
  const auto selection = classify::select_good_bands(scene.cube->info());
  classify::TrainingSet training;
  training.features = classify::memory_training_source(
      std::vector<float>(static_cast<std::size_t>(3 * selection.dims()), 1.0f), selection.dims(), "three rows");
  training.labels = {1, 2, 3};
  auto prepared = PreparedTraining::prepare(*training.features, Metric::euclidean, 1 << 20);
  auto result = classify_scene(*scene.cube, selection, training, *prepared, options_k(4),
                               [](const ClassifiedRows&) -> Status { return {}; });
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().kind, ErrorKind::usage);
  EXPECT_EQ(result.error().field, "-k");
}

TEST(KnnFeatures, BadBandsDroppedAndNonFiniteOrIgnoredPixelsFlagged) {
  io::CubeInfo info;
  info.shape = {1, 4, 3};
  info.meta.bbl = {1, 0, 1};
  info.meta.wavelength = {400, 500, 600};
  const auto selection = classify::select_good_bands(info);
  EXPECT_EQ(selection.bands, (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(selection.wavelength, (std::vector<double>{400, 600}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> samples{1, 2, 3, 4, nan, 6, 7, 8, nan, -1, 9, -1};  // NaN in the bad band is harmless
  std::vector<float> features(8);
  std::vector<std::uint8_t> valid(4);
  classify::extract_features(samples.data(), 4, selection, -1.0, features.data(), valid.data());
  EXPECT_EQ(valid, (std::vector<std::uint8_t>{1, 1, 0, 0}));
  EXPECT_EQ(features, (std::vector<float>{1, 3, 4, 6, 0, 0, 0, 0}));
}

// The one-pass packer of QueryTiles gives the bits of extract_features followed by
// pack_valid_pixels, for every data type, with and without a shift, over more pixels
// than one packing piece (ignored, non-finite and bad-band samples included); so does
// listing the valid pixels and gathering their queries afterwards.
TEST(KnnFeatures, OnePassPackingEqualsExtractThenPack) {
  constexpr std::int64_t kRows = 3, kWide = 7001, kSceneBands = 5;
  io::CubeInfo info;
  info.shape = {kRows, kWide, kSceneBands};
  info.meta.bbl = {1, 1, 0, 1, 1};
  const auto selection = classify::select_good_bands(info);
  const std::vector<double> shift{-0.3, 1e5, 17.25, 1.0 / 3.0};
  const double ignore = 7;
  for (const auto type : {DataType::u8, DataType::i16, DataType::u16, DataType::i32,
                          DataType::u32, DataType::i64, DataType::u64, DataType::f32,
                          DataType::f64}) {
    io::Tile tile(type, kWide, kSceneBands, {0, kRows}, {0, kRows});
    std::mt19937 rng(static_cast<unsigned>(type));
    visit_data_type(type, [&](auto zero) {
      using T = decltype(zero);
      auto values = tile.as<T>();
      for (std::size_t i = 0; i < values.size(); ++i) {
        double v = static_cast<double>(rng() % 200) + (std::is_integral_v<T> ? 0.0 : 0.123456789);
        if (i % 97 == 3) v = ignore;  // rules its pixel out unless it falls in the bad band
        values[i] = static_cast<T>(v);
      }
      if constexpr (!std::is_integral_v<T>) values[5 * 40 + 1] = std::numeric_limits<T>::quiet_NaN();
    });
    for (const bool shifted : {false, true}) {
      const std::span<const double> s = shifted ? std::span<const double>(shift) : std::span<const double>();
      std::vector<float> features(static_cast<std::size_t>(tile.pixels() * selection.dims()));
      std::vector<std::uint8_t> valid(static_cast<std::size_t>(tile.pixels()));
      classify::extract_features(tile, 0, tile.pixels(), selection, ignore, features.data(), valid.data());
      const classify::FeatureTile feature_tile{{0, kRows}, 0, tile.pixels(), features, valid};
      std::vector<float> want(features.size()), got(features.size());
      std::vector<std::int64_t> want_pixel, got_pixel;
      std::vector<std::uint8_t> got_valid;
      const auto n = classify::pack_valid_pixels(feature_tile, selection.dims(), s, want.data(), want_pixel);
      ASSERT_EQ(classify::pack_valid_queries(tile, selection, ignore, s, got.data(), got_valid, got_pixel), n);
      EXPECT_GT(n, tile.pixels() / 2);
      EXPECT_LT(n, tile.pixels());
      EXPECT_EQ(got_valid, valid) << data_type_name(type);
      EXPECT_EQ(got_pixel, want_pixel) << data_type_name(type);
      EXPECT_EQ(std::memcmp(got.data(), want.data(), static_cast<std::size_t>(n * selection.dims()) * 4), 0)
          << data_type_name(type) << (shifted ? " shifted" : "");
      // The valid pixels listed, then their queries gathered (the path a GPU search
      // takes, here on the host): the same pixels and bits.
      std::vector<float> gathered(features.size());
      ASSERT_EQ(classify::valid_pixels(tile, selection, ignore, got_valid, got_pixel), n);
      EXPECT_EQ(got_valid, valid) << data_type_name(type);
      EXPECT_EQ(got_pixel, want_pixel) << data_type_name(type);
      classify::gather_queries(tile, got_pixel, selection.bands, s, gathered.data());
      EXPECT_EQ(std::memcmp(gathered.data(), want.data(), static_cast<std::size_t>(n * selection.dims()) * 4), 0)
          << data_type_name(type) << (shifted ? " shifted, listed then gathered" : " listed then gathered");
    }
  }
}

// Narrow integers check validity by an integer compare: the same flags as the float
// compare of extract_features for ignore values that are one of the type's values, a
// fraction, outside the type's range, at its ends, NaN or infinite; and the same as the
// GPU's rule, a used band holding narrow_ignore_target.
TEST(KnnFeatures, NarrowIntegerValidityEqualsTheFloatCompare) {
  constexpr std::int64_t kWide = 9000, kSceneBands = 4;
  io::CubeInfo info;
  info.shape = {1, kWide, kSceneBands};
  info.meta.bbl = {1, 0, 1, 1};
  const auto selection = classify::select_good_bands(info);
  for (const auto type : {DataType::u8, DataType::i16, DataType::u16})
    for (const double ignore : {7.0, 7.5, -1.0, 255.0, 65535.0, -32768.0, 1e6, std::numeric_limits<double>::quiet_NaN(),
                                std::numeric_limits<double>::infinity()}) {
      io::Tile tile(type, kWide, kSceneBands, {0, 1}, {0, 1});
      std::mt19937 rng(static_cast<unsigned>(type));
      visit_data_type(type, [&](auto zero) {
        using T = decltype(zero);
        auto values = tile.as<T>();
        // The ignore value where the type holds it; otherwise a value it cannot equal.
        const auto target = classify::narrow_ignore_target(type, ignore);
        const T planted = target ? static_cast<T>(*target) : T{7};
        for (std::size_t i = 0; i < values.size(); ++i)
          values[i] = i % 211 == 5 ? planted : static_cast<T>(rng() % 300 + (i % 2 ? 0 : 65000));
      });
      std::vector<float> features(static_cast<std::size_t>(kWide * selection.dims()));
      std::vector<std::uint8_t> want(kWide), got(kWide);
      classify::extract_features(tile, 0, kWide, selection, ignore, features.data(), want.data());
      classify::extract_validity(tile, selection, ignore, got.data());
      EXPECT_EQ(got, want) << data_type_name(type) << " ignore " << ignore;
      // The GPU's rule (narrow_ignore_target): out when a used band holds the target.
      const auto target = classify::narrow_ignore_target(type, ignore);
      visit_data_type(type, [&](auto zero) {
        using T = decltype(zero);
        if constexpr (std::is_integral_v<T> && sizeof(T) <= 2) {
          const auto values = tile.as<T>();
          for (std::int64_t p = 0; p < kWide; ++p) {
            bool out = false;
            for (const auto b : selection.bands)
              out |= target && std::int64_t{values[static_cast<std::size_t>(p * kSceneBands + b)]} == *target;
            ASSERT_EQ(want[static_cast<std::size_t>(p)], out ? 0 : 1) << data_type_name(type) << " ignore " << ignore;
          }
        }
      });
    }
}

// Class ids of any integer type, read on every core (2 M pixels: several pieces): the
// ids as they are, and one id out of 0..65535 anywhere is a bad-input error on "data".
TEST(KnnTruth, ClassRasterIdsAreReadOrRefusedWithTheirField) {
  const io::CubeShape shape{2000, 1000, 1};
  const auto raster = [&](DataType type, auto values) {
    io::CubeInfo info;
    info.shape = shape;
    info.type = type;
    return test::MemoryCube(info, test::to_bytes(values));
  };
  std::vector<std::int32_t> ids(static_cast<std::size_t>(shape.pixels()));
  for (std::size_t p = 0; p < ids.size(); ++p) ids[p] = static_cast<std::int32_t>((p * 7919) % 65536);
  const auto read = classify::read_class_raster(raster(DataType::i32, ids), shape);
  ASSERT_TRUE(read.ok()) << read.error().line();
  for (std::size_t p = 0; p < ids.size(); ++p) ASSERT_EQ((*read)[p], ids[p]) << "pixel " << p;
  for (const std::int32_t bad : {-1, 65536}) {
    auto wrong = ids;
    wrong[1234567] = bad;
    const auto refused = classify::read_class_raster(raster(DataType::i32, wrong), shape);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().kind, ErrorKind::bad_input);
    EXPECT_EQ(refused.error().field, "data");
    EXPECT_EQ(refused.error().file, "memory.hdr");
  }
  const auto floats = classify::read_class_raster(raster(DataType::f32, std::vector<float>(ids.size(), 1.0f)), shape);
  ASSERT_FALSE(floats.ok());
  EXPECT_EQ(floats.error().field, "data type");
}

TEST(KnnFeatures, FeatureSpecParsing) {
  EXPECT_EQ(classify::parse_feature_spec("bands")->kind, classify::FeatureSpec::Kind::bands);
  const auto mnf = classify::parse_feature_spec("mnf:12");
  ASSERT_TRUE(mnf.ok());
  EXPECT_EQ(mnf->components, 12);
  for (const char* bad : {"mnf:", "mnf:0", "mnf:3x", "pca:4"}) {
    const auto r = classify::parse_feature_spec(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().field, "--features");
  }
}

TEST(KnnOutputs, SiblingNamesAndCompletedClassTables) {
  EXPECT_EQ(classify::sibling_path("/d/map.hdr", "_confidence"), "/d/map_confidence.hdr");
  EXPECT_EQ(classify::sibling_path("/d/map", "_confidence"), "/d/map_confidence");
  EXPECT_EQ(classify::sibling_path("map.h5", "_report"), "map_report.h5");
  const auto table = classify::complete_class_table({{"Unclassified", "Tree"}, {0, 0, 0, 1, 2, 3}}, 4);
  EXPECT_EQ(table.names, (std::vector<std::string>{"Unclassified", "Tree", "Class 2", "Class 3"}));
  ASSERT_EQ(table.lookup.size(), 12u);
  EXPECT_EQ(std::vector<int>(table.lookup.begin(), table.lookup.begin() + 6), (std::vector<int>{0, 0, 0, 1, 2, 3}));
}

}  // namespace
}  // namespace hb::knn
