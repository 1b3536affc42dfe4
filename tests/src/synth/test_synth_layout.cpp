// The class map of the synthetic scenes: no-data border geometry, class coverage,
// spatial coherence and border mixtures.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "src/synth/flightline.hpp"
#include "src/synth/layout.hpp"

namespace hb::synth {
namespace {

double fill_fraction(const FlightStrip& strip, std::int64_t lines, std::int64_t samples) {
  std::int64_t fill = 0;
  for (std::int64_t l = 0; l < lines; ++l)
    for (std::int64_t s = 0; s < samples; ++s) fill += !strip.contains(l, s);
  return static_cast<double>(fill) / static_cast<double>(lines * samples);
}

struct Shape {
  std::int64_t lines;
  std::int64_t samples;
};

TEST(SynthFlightline, FillFractionMatchesTheRequestForAnyShape) {
  for (Shape shape : {Shape{256, 256}, Shape{800, 100}, Shape{100, 800}, Shape{1600, 67}}) {
    for (double fill : {0.05, 0.2, 0.45, 0.7, 0.9}) {
      const FlightStrip strip(shape.lines, shape.samples, fill, 11);
      EXPECT_NEAR(1.0 - strip.valid_area_fraction(), fill, 1e-6);
      EXPECT_NEAR(fill_fraction(strip, shape.lines, shape.samples), fill, 0.02)
          << shape.lines << "x" << shape.samples << " fill " << fill;
    }
  }
}

TEST(SynthFlightline, NoFillMeansEveryPixelIsValid) {
  const FlightStrip strip(64, 64, 0.0, 1);
  EXPECT_EQ(fill_fraction(strip, 64, 64), 0.0);
}

TEST(SynthFlightline, FillLiesInTheCornersAndTheCentreIsValid) {
  const FlightStrip strip(400, 300, 0.3, 4);
  EXPECT_TRUE(strip.contains(200, 150));
  EXPECT_NE(strip.heading_rad(), 0.0);
  // A rotated rectangle inscribed in its bounding box leaves two opposite corners empty.
  const int empty_corners = !strip.contains(0, 0) + !strip.contains(0, 299) + !strip.contains(399, 0) +
                            !strip.contains(399, 299);
  EXPECT_GE(empty_corners, 2);
}

TEST(SynthFlightline, HeadingFollowsTheSeed) {
  bool saw_positive = false, saw_negative = false;
  for (std::uint64_t seed = 0; seed < 16; ++seed) {
    const double heading = FlightStrip(100, 100, 0.2, seed).heading_rad();
    saw_positive |= heading > 0;
    saw_negative |= heading < 0;
  }
  EXPECT_TRUE(saw_positive && saw_negative);
}

std::vector<PixelCover> cover_all(const Layout& layout, std::int64_t lines, std::int64_t samples) {
  std::vector<PixelCover> covers;
  for (std::int64_t l = 0; l < lines; ++l)
    for (std::int64_t s = 0; s < samples; ++s) covers.push_back(layout.at(l, s));
  return covers;
}

TEST(SynthLayout, EveryClassIsPresent) {
  for (int classes : {1, 6, 12, 40}) {
    const Layout layout(200, 220, classes, 3, 0.0);
    std::set<int> seen;
    for (const auto& c : cover_all(layout, 200, 220)) seen.insert(c.primary);
    EXPECT_EQ(static_cast<int>(seen.size()), classes);
    EXPECT_EQ(*seen.rbegin(), classes - 1);
  }
}

TEST(SynthLayout, NeighboursMostlyShareTheirClass) {
  const std::int64_t lines = 256, samples = 256;
  const Layout layout(lines, samples, 8, 21, 0.0);
  const auto covers = cover_all(layout, lines, samples);
  std::int64_t same = 0, pairs = 0;
  for (std::int64_t l = 0; l < lines; ++l) {
    for (std::int64_t s = 0; s < samples; ++s) {
      const int here = covers[static_cast<std::size_t>(l * samples + s)].primary;
      auto compare = [&](std::int64_t ll, std::int64_t ss) {
        same += here == covers[static_cast<std::size_t>(ll * samples + ss)].primary;
        ++pairs;
      };
      if (s + 1 < samples) compare(l, s + 1);
      if (l + 1 < lines) compare(l + 1, s);
    }
  }
  EXPECT_GT(static_cast<double>(same) / static_cast<double>(pairs), 0.9);
}

TEST(SynthLayout, MixturesOnlyAtBordersAndNeverDominant) {
  const std::int64_t lines = 200, samples = 200;
  const Layout layout(lines, samples, 6, 8, 0.0);
  const auto covers = cover_all(layout, lines, samples);
  std::int64_t mixed = 0;
  for (std::int64_t l = 1; l + 1 < lines; ++l) {
    for (std::int64_t s = 1; s + 1 < samples; ++s) {
      const PixelCover& c = covers[static_cast<std::size_t>(l * samples + s)];
      EXPECT_LE(c.secondary_weight, 0.5f);
      EXPECT_GE(c.secondary_weight, 0.0f);
      if (c.secondary_weight == 0.0f) continue;
      ++mixed;
      EXPECT_NE(c.secondary, c.primary);
      // A strongly mixed pixel touches (within 2 pixels) the material it is mixed with.
      if (c.secondary_weight < 0.3f) continue;
      bool touches = false;
      for (std::int64_t dl = -2; dl <= 2; ++dl)
        for (std::int64_t ds = -2; ds <= 2; ++ds) {
          const std::int64_t ll = std::clamp<std::int64_t>(l + dl, 0, lines - 1);
          const std::int64_t ss = std::clamp<std::int64_t>(s + ds, 0, samples - 1);
          touches |= covers[static_cast<std::size_t>(ll * samples + ss)].primary == c.secondary;
        }
      EXPECT_TRUE(touches) << l << "," << s;
    }
  }
  const double fraction = static_cast<double>(mixed) / static_cast<double>(lines * samples);
  EXPECT_GT(fraction, 0.01);
  EXPECT_LT(fraction, 0.3);
}

TEST(SynthLayout, BrightnessVariesSmoothlyAndCanBeSwitchedOff) {
  const Layout varied(64, 64, 3, 2, 0.0);
  const Layout flat(64, 64, 3, 2, 0.0, LayoutParams{0.0, 2.0});
  float low = 2, high = 0;
  for (std::int64_t s = 0; s < 64; ++s) {
    const float b = varied.at(30, s).brightness;
    low = std::min(low, b);
    high = std::max(high, b);
    EXPECT_EQ(flat.at(30, s).brightness, 1.0f);
  }
  EXPECT_GT(low, 0.9f);
  EXPECT_LT(high, 1.1f);
  EXPECT_GT(high - low, 0.005f);
}

TEST(SynthLayout, FillPixelsAreMarked) {
  const Layout layout(120, 90, 4, 6, 0.25);
  std::int64_t fill = 0;
  for (const auto& c : cover_all(layout, 120, 90)) fill += c.fill;
  EXPECT_NEAR(static_cast<double>(fill) / (120 * 90), 0.25, 0.02);
}

}  // namespace
}  // namespace hb::synth
