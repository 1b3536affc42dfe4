// The stratified split: per class, the first n pixels in (seed, pixel) hash order are
// training pixels, everything else labelled and valid is evaluation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "src/base/parallel_for.hpp"
#include "src/classify/sampling.hpp"

namespace hb::knn {
namespace {

// 60 x 50 raster: four classes of different sizes in bands, some unlabelled pixels,
// and an invalid (no-data) patch.
struct Raster {
  std::vector<std::uint16_t> truth;
  std::vector<std::uint8_t> valid;
};

Raster make_raster() {
  Raster r;
  for (int line = 0; line < 60; ++line)
    for (int sample = 0; sample < 50; ++sample) {
      const int p = line * 50 + sample;
      std::uint16_t label = line < 30 ? 1 : line < 45 ? 2 : line < 57 || sample >= 20 ? 3 : 9;
      if (p % 7 == 0) label = 0;
      r.truth.push_back(label);
      r.valid.push_back(line >= 10 && line < 14 && sample < 20 ? 0 : 1);
    }
  return r;
}

std::map<std::uint16_t, std::vector<std::int64_t>> usable_by_class(const Raster& r) {
  std::map<std::uint16_t, std::vector<std::int64_t>> m;
  for (std::size_t p = 0; p < r.truth.size(); ++p)
    if (r.truth[p] != 0 && r.valid[p]) m[r.truth[p]].push_back(static_cast<std::int64_t>(p));
  return m;
}

// Independent statement of the rule: the n pixels of lowest (rank, index).
std::vector<std::int64_t> expected_training(std::vector<std::int64_t> pixels, std::int64_t n, std::uint64_t seed) {
  std::sort(pixels.begin(), pixels.end(), [&](std::int64_t a, std::int64_t b) {
    return std::pair(classify::pixel_rank(seed, a), a) < std::pair(classify::pixel_rank(seed, b), b);
  });
  pixels.resize(static_cast<std::size_t>(n));
  std::sort(pixels.begin(), pixels.end());
  return pixels;
}

TEST(KnnSampling, PerClassCountTakesTheLowestHashRanksOfEachClass) {
  const auto r = make_raster();
  const auto split = classify::stratified_split(r.truth, r.valid, {std::nullopt, 100, 42});
  ASSERT_TRUE(split.ok());
  const auto classes = usable_by_class(r);
  std::vector<std::int64_t> want;
  for (const auto& [label, pixels] : classes) {
    const auto n = std::min<std::int64_t>(100, static_cast<std::int64_t>(pixels.size()));
    const auto part = expected_training(pixels, n, 42);
    want.insert(want.end(), part.begin(), part.end());
  }
  std::sort(want.begin(), want.end());
  EXPECT_EQ(split->train, want);
  ASSERT_LT(classes.at(9).size(), 100u);  // class 9 is smaller than 100: all of it trains
  for (const auto p : classes.at(9)) EXPECT_TRUE(std::binary_search(split->train.begin(), split->train.end(), p));
}

TEST(KnnSampling, TrainingAndEvaluationPartitionTheUsablePixels) {
  const auto r = make_raster();
  const auto split = classify::stratified_split(r.truth, r.valid, {0.25, std::nullopt, 7});
  ASSERT_TRUE(split.ok());
  EXPECT_TRUE(std::is_sorted(split->train.begin(), split->train.end()));
  EXPECT_TRUE(std::is_sorted(split->eval.begin(), split->eval.end()));
  std::set<std::int64_t> all(split->train.begin(), split->train.end());
  for (const auto p : split->eval) EXPECT_TRUE(all.insert(p).second) << "pixel " << p << " in both sets";
  std::set<std::int64_t> usable;
  for (const auto& [label, pixels] : usable_by_class(r)) usable.insert(pixels.begin(), pixels.end());
  EXPECT_EQ(all, usable);  // no unlabelled or invalid pixel, none missing
}

TEST(KnnSampling, FractionIsRoundedPerClassWithAtLeastOnePixel) {
  const auto r = make_raster();
  const auto split = classify::stratified_split(r.truth, r.valid, {0.01, std::nullopt, 3});
  ASSERT_TRUE(split.ok());
  std::map<std::uint16_t, std::int64_t> taken;
  for (const auto p : split->train) ++taken[r.truth[static_cast<std::size_t>(p)]];
  for (const auto& [label, pixels] : usable_by_class(r)) {
    const auto want = std::max<std::int64_t>(1, std::llround(0.01 * static_cast<double>(pixels.size())));
    EXPECT_EQ(taken[label], want) << "class " << label;
  }
}

TEST(KnnSampling, SameSeedSameSplitOtherSeedOtherSplit) {
  const auto r = make_raster();
  const auto a = classify::stratified_split(r.truth, r.valid, {std::nullopt, 20, 5});
  const auto b = classify::stratified_split(r.truth, r.valid, {std::nullopt, 20, 5});
  const auto c = classify::stratified_split(r.truth, r.valid, {std::nullopt, 20, 6});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->train, b->train);
  EXPECT_EQ(a->eval, b->eval);
  EXPECT_NE(a->train, c->train);
}

TEST(KnnSampling, OneClassDrawDoesNotDependOnOtherClasses) {
  auto r = make_raster();
  const auto before = classify::stratified_split(r.truth, r.valid, {std::nullopt, 15, 9});
  for (auto& label : r.truth)
    if (label == 2) label = 0;  // remove class 2 entirely
  const auto after = classify::stratified_split(r.truth, r.valid, {std::nullopt, 15, 9});
  ASSERT_TRUE(before.ok() && after.ok());
  auto of_class_1 = [&](const std::vector<std::int64_t>& pixels) {
    std::vector<std::int64_t> out;
    for (const auto p : pixels)
      if (r.truth[static_cast<std::size_t>(p)] == 1) out.push_back(p);
    return out;
  };
  EXPECT_EQ(of_class_1(before->train), of_class_1(after->train));
}

TEST(KnnSampling, OptionsAreCheckedWithTheirNames) {
  const auto r = make_raster();
  const auto neither = classify::stratified_split(r.truth, r.valid, {});
  ASSERT_FALSE(neither.ok());
  EXPECT_EQ(neither.error().kind, ErrorKind::usage);
  const auto zero = classify::stratified_split(r.truth, r.valid, {0.0, std::nullopt, 0});
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error().field, "--train-fraction");
  EXPECT_FALSE(classify::stratified_split(r.truth, r.valid, {0.5, 10, 0}).ok());
}

// The split scans pieces of the raster in parallel: a large raster drawn on one thread
// and on every thread gives the same lists, equal to the rule stated independently.
TEST(KnnSampling, DrawDoesNotDependOnTheThreadCount) {
  Raster r;
  for (std::int64_t p = 0; p < 700000; ++p) {  // several 65536-pixel pieces
    r.truth.push_back(static_cast<std::uint16_t>(p % 11 == 0 ? 0 : 1 + (p / 1000) % 5));
    r.valid.push_back(p % 97 == 0 ? 0 : 1);
  }
  for (const classify::SplitOptions options :
       {classify::SplitOptions{std::nullopt, 300, 4}, classify::SplitOptions{0.02, std::nullopt, 4}}) {
    share_host_threads(1 << 20);  // one thread
    const auto serial = *classify::stratified_split(r.truth, r.valid, options);
    share_host_threads(1);  // every allowed CPU
    const auto parallel = *classify::stratified_split(r.truth, r.valid, options);
    EXPECT_EQ(serial.train, parallel.train);
    EXPECT_EQ(serial.eval, parallel.eval);
    if (options.per_class) {
      std::vector<std::int64_t> want;
      for (const auto& [label, pixels] : usable_by_class(r)) {
        const auto drawn = expected_training(pixels, *options.per_class, options.seed);
        want.insert(want.end(), drawn.begin(), drawn.end());
      }
      std::sort(want.begin(), want.end());
      EXPECT_EQ(parallel.train, want);
    }
  }
}

// The draw that checks validity only where it looks gives the training pixels of the
// draw over the whole mask: on the banded raster, on a large one, and where a class's
// first pixels in draw order are all invalid (so that it must look further, twice).
TEST(KnnSampling, CheckedDrawEqualsTheDrawOverTheWholeMask) {
  Raster large;
  for (std::int64_t p = 0; p < 700000; ++p) {
    large.truth.push_back(static_cast<std::uint16_t>(p % 11 == 0 ? 0 : 1 + (p / 1000) % 5));
    large.valid.push_back(p % 97 == 0 ? 0 : 1);
  }
  Raster hidden = large;  // class 3's 400 first pixels in draw order are invalid
  std::vector<std::int64_t> three;
  for (std::int64_t p = 0; p < 700000; ++p)
    if (hidden.truth[static_cast<std::size_t>(p)] == 3) three.push_back(p);
  std::sort(three.begin(), three.end(), [](std::int64_t a, std::int64_t b) {
    return std::pair(classify::pixel_rank(8, a), a) < std::pair(classify::pixel_rank(8, b), b);
  });
  for (std::size_t i = 0; i < 400; ++i) hidden.valid[static_cast<std::size_t>(three[i])] = 0;
  struct Case {
    const char* name;
    Raster raster;
    std::int64_t per_class;
    std::uint64_t seed;
  };
  for (const auto& c : {Case{"banded", make_raster(), 100, 42}, Case{"banded, 1", make_raster(), 1, 3},
                        Case{"large", large, 20, 4}, Case{"large, 300", large, 300, 5}, Case{"hidden", hidden, 50, 8}}) {
    std::set<std::int64_t> asked;
    bool ascending = true;
    const classify::PixelCheck check = [&](std::span<const std::int64_t> pixels) -> Result<std::vector<std::uint8_t>> {
      ascending = ascending && std::is_sorted(pixels.begin(), pixels.end());
      std::vector<std::uint8_t> flags;
      for (const auto p : pixels) {
        EXPECT_TRUE(asked.insert(p).second) << c.name << ": pixel " << p << " checked twice";
        flags.push_back(c.raster.valid[static_cast<std::size_t>(p)]);
      }
      return flags;
    };
    const classify::SplitOptions options{std::nullopt, c.per_class, c.seed};
    const auto checked = classify::draw_per_class(c.raster.truth, options, check);
    const auto whole = classify::stratified_split(c.raster.truth, c.raster.valid, options);
    ASSERT_TRUE(checked.ok() && whole.ok()) << c.name;
    EXPECT_EQ(*checked, whole->train) << c.name;
    EXPECT_TRUE(ascending) << c.name;
    // Only about n a class are read: far fewer than the raster's pixels.
    const auto classes = usable_by_class(c.raster).size();
    EXPECT_LE(asked.size(), classes * static_cast<std::size_t>(4 * c.per_class + 400 + 64)) << c.name;
  }
}

TEST(KnnSampling, CheckedDrawPassesOnTheChecksError) {
  const auto r = make_raster();
  const classify::PixelCheck failing = [](std::span<const std::int64_t>) -> Result<std::vector<std::uint8_t>> {
    return Error{ErrorKind::io, "scene.img", "data", "short read"};
  };
  const auto drawn = classify::draw_per_class(r.truth, {std::nullopt, 10, 1}, failing);
  ASSERT_FALSE(drawn.ok());
  EXPECT_EQ(drawn.error().file, "scene.img");
}

// Ranks draw from their own rows: the candidate lists of any cut of the raster into
// slices, merged, are the whole raster's lists, and the draw over them is the same.
TEST(KnnSampling, SlicesMergedGiveTheWholeRastersCandidatesAndDraw) {
  const auto r = make_raster();
  const std::int64_t samples = 50;
  const std::vector<std::int64_t> limit{0, 7, 40, 300, 0, 0, 0, 0, 0, 5};
  const auto whole = classify::smallest_candidates(r.truth, 0, 11, limit);
  using Cuts = std::vector<std::int64_t>;  // slice boundaries in rows
  for (const Cuts& cuts : {Cuts{0, 60}, Cuts{0, 13, 14, 60}, Cuts{0, 0, 31, 59, 60}}) {
    const auto slices = [&](std::span<const std::int64_t> lim) -> Result<classify::CandidateLists> {
      classify::CandidateLists merged(lim.size());
      for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
        const std::span<const std::uint16_t> rows(r.truth.data() + cuts[i] * samples,
                                                  static_cast<std::size_t>((cuts[i + 1] - cuts[i]) * samples));
        const auto part = classify::smallest_candidates(rows, cuts[i] * samples, 11, lim);
        for (std::size_t c = 0; c < part.size(); ++c) merged[c].insert(merged[c].end(), part[c].begin(), part[c].end());
      }
      for (std::size_t c = 0; c < merged.size(); ++c) classify::keep_smallest(merged[c], lim[c]);
      return merged;
    };
    const auto lists = *slices(limit);
    ASSERT_EQ(lists.size(), whole.size());
    for (std::size_t c = 0; c < lists.size(); ++c)
      EXPECT_EQ(lists[c], whole[c]) << "class " << c << ", " << cuts.size() - 1 << " slices";
    EXPECT_EQ(lists[1].size(), 7u);
    EXPECT_EQ(lists[9].size(), 5u);

    const classify::PixelCheck check = [&](std::span<const std::int64_t> pixels) -> Result<std::vector<std::uint8_t>> {
      std::vector<std::uint8_t> flags;
      for (const auto p : pixels) flags.push_back(r.valid[static_cast<std::size_t>(p)]);
      return flags;
    };
    const classify::SplitOptions options{std::nullopt, 25, 11};
    const auto sliced = classify::draw_per_class(slices, 9, options, check);
    const auto one = classify::draw_per_class(r.truth, options, check);
    ASSERT_TRUE(sliced.ok() && one.ok());
    EXPECT_EQ(*sliced, *one) << cuts.size() - 1 << " slices";
    EXPECT_EQ(*one, classify::stratified_split(r.truth, r.valid, options)->train);
  }
}

}  // namespace
}  // namespace hb::knn
