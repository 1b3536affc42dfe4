// Helpers shared by the SAM tests (CPU in tests/src, GPU in tests/kernels): the real
// Jasper Ridge scene as one tile, synthetic libraries mixed from its endmembers, and
// a float64 per-pixel reference that shares no code with the scorers.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "io/cube.hpp"
#include "src/sam/library.hpp"
#include "src/sam/scorer.hpp"

namespace hb::sam::test {

inline std::string jasper(const std::string& name) { return std::string(HB_SHARED_DATA) + "/jasper_ridge/" + name; }

inline bool have_jasper() { return std::filesystem::exists(jasper("jasper_ridge.hdr")); }

#define HB_REQUIRE_JASPER()                                                                             \
  if (!hb::sam::test::have_jasper()) GTEST_SKIP() << "real data absent: " << hb::sam::test::jasper(""); \
  static_assert(true)

// The whole scene as one tile (10000 pixels x 198 int16 bands).
inline io::Tile jasper_tile() {
  auto cube = io::open_cube(jasper("jasper_ridge.hdr"));
  EXPECT_TRUE(cube.ok());
  auto tile = (*cube)->read_tile({0, (*cube)->info().shape.lines});
  EXPECT_TRUE(tile.ok());
  return std::move(*tile);
}

inline SpectralLibrary jasper_endmembers() {
  auto lib = read_library(jasper("jasper_ridge_endmembers_gt.sli"));
  EXPECT_TRUE(lib.ok()) << (lib.ok() ? "" : lib.error().line());
  return std::move(*lib);
}

// `count` spectra: the endmembers first, then random convex mixtures of them with 2 %
// noise, scaled to the scene's DN range (so that constant-memory and global layouts,
// and every formulation, see realistic angles).
inline std::vector<double> mixed_library(const SpectralLibrary& endmembers, std::int64_t count, std::uint32_t seed) {
  const std::int64_t dims = endmembers.channels;
  std::mt19937 rng(seed);
  std::gamma_distribution<double> gamma(1.0, 1.0);
  std::normal_distribution<double> noise(0.0, 0.02);
  std::vector<double> out;
  for (std::int64_t i = 0; i < count; ++i) {
    std::vector<double> w(static_cast<std::size_t>(endmembers.count()), 0.0);
    if (i < endmembers.count()) {
      w[static_cast<std::size_t>(i)] = 1.0;
    } else {
      double total = 0;
      for (auto& x : w) total += (x = gamma(rng));
      for (auto& x : w) x /= total;
    }
    for (std::int64_t f = 0; f < dims; ++f) {
      double v = 0;
      for (std::int64_t e = 0; e < endmembers.count(); ++e)
        v += w[static_cast<std::size_t>(e)] * endmembers.spectra[static_cast<std::size_t>(e * dims + f)];
      out.push_back(5000.0 * v * (1.0 + (i < endmembers.count() ? 0.0 : noise(rng))));
    }
  }
  return out;
}

inline std::vector<std::string> numbered_names(std::int64_t count) {
  std::vector<std::string> names;
  for (std::int64_t i = 0; i < count; ++i) names.push_back("s" + std::to_string(i));
  return names;
}

inline PixelBands all_bands(std::int64_t bands, std::optional<double> ignore = std::nullopt) {
  PixelBands b;
  for (std::int64_t i = 0; i < bands; ++i) b.bands.push_back(i);
  b.ignore_value = ignore;
  return b;
}

// Straight from the definitions: arccos(x.r / (|x||r|)) or Pearson's r, in float64.
inline double reference_score(Method method, const double* x, const double* r, std::int64_t dims) {
  double mx = 0, mr = 0;
  if (method == Method::scm) {
    for (std::int64_t f = 0; f < dims; ++f) mx += x[f], mr += r[f];
    mx /= static_cast<double>(dims);
    mr /= static_cast<double>(dims);
  }
  double dot = 0, nx = 0, nr = 0;
  for (std::int64_t f = 0; f < dims; ++f) {
    dot += (x[f] - mx) * (r[f] - mr);
    nx += (x[f] - mx) * (x[f] - mx);
    nr += (r[f] - mr) * (r[f] - mr);
  }
  const double c = dot / std::sqrt(nx * nr);
  return method == Method::sam ? std::acos(std::clamp(c, -1.0, 1.0)) : c;
}

inline TileScores score_with(SamScorer& scorer, Method method, const std::vector<double>& spectra, std::int64_t dims,
                             const io::Tile& tile, const PixelBands& bands, bool all = true) {
  auto refs = prepare_references(method, spectra, dims, numbered_names(static_cast<std::int64_t>(spectra.size()) / dims), "test");
  EXPECT_TRUE(refs.ok());
  EXPECT_TRUE(scorer.set_references(*refs).ok());
  TileScores out;
  const Status s = scorer.score(tile, bands, all, out);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().line());
  return out;
}

}  // namespace hb::sam::test
