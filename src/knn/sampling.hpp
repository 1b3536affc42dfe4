// Training and evaluation sets drawn from a ground-truth class raster (0 = unlabelled).
// Stratified and deterministic: within each class, pixels are ordered by a hash of
// (seed, pixel index) and the first n are training pixels; every other labelled,
// valid pixel is an evaluation pixel. The draw depends only on the seed, the raster
// and the validity mask, never on tiling or thread count.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "io/error.hpp"

namespace hb::knn {

struct SplitOptions {
  // Exactly one of the two: a fraction in (0, 1] of each class (rounded to nearest,
  // at least one pixel per class), or a count per class (all pixels of a smaller class).
  std::optional<double> fraction;
  std::optional<std::int64_t> per_class;
  std::uint64_t seed = 0;
};

struct Split {
  std::vector<std::int64_t> train;  // scene pixel indices (line * samples + sample), ascending
  std::vector<std::int64_t> eval;   // ascending
};

// The order key of a pixel within its class (splitmix64 of seed and index).
std::uint64_t pixel_rank(std::uint64_t seed, std::int64_t pixel);

// `valid` (empty = all valid) marks pixels whose spectra can be used.
Result<Split> stratified_split(std::span<const std::uint16_t> truth, std::span<const std::uint8_t> valid,
                               const SplitOptions& options);

// Every labelled valid pixel: the evaluation set when training comes from a file.
std::vector<std::int64_t> labelled_pixels(std::span<const std::uint16_t> truth, std::span<const std::uint8_t> valid);

}  // namespace hb::knn
