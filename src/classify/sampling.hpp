// Training and evaluation sets drawn from a ground-truth class raster (0 = unlabelled).
// Stratified and deterministic: within each class, pixels are ordered by a hash of
// (seed, pixel index) and the first n are training pixels; every other labelled,
// valid pixel is an evaluation pixel. The draw depends only on the seed, the raster
// and the validity mask, never on tiling or thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "src/base/error.hpp"

namespace hb::classify {

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

// Validity flags (1 = usable) of the given scene pixels, ascending.
using PixelCheck = std::function<Result<std::vector<std::uint8_t>>(std::span<const std::int64_t>)>;

// The training pixels of stratified_split with a count per class, without a validity
// mask: only the pixels the draw reaches are checked (about n per class, where a mask
// costs a read of the whole scene). The same pixels as stratified_split(truth, mask).
Result<std::vector<std::int64_t>> draw_per_class(std::span<const std::uint16_t> truth, const SplitOptions& options,
                                                 const PixelCheck& check);

// A draw candidate: (pixel_rank, scene pixel); a class's draw order is ascending.
using Candidate = std::pair<std::uint64_t, std::int64_t>;
using CandidateLists = std::vector<std::vector<Candidate>>;  // per class id

// Per class id c, the limit[c] first labelled pixels in draw order (ascending) of truth
// rows holding scene pixels [first_pixel, first_pixel + truth.size()); ids beyond
// limit's end get none. Any cut of the raster into slices gives, merged by
// keep_smallest, the lists of the whole raster: ranks draw from their own rows.
CandidateLists smallest_candidates(std::span<const std::uint16_t> truth, std::int64_t first_pixel, std::uint64_t seed,
                                   std::span<const std::int64_t> limit);
// Sorts a class's candidates and keeps the `limit` first.
void keep_smallest(std::vector<Candidate>& members, std::int64_t limit);

// smallest_candidates of the whole raster, wherever its rows are (a rank's slices, gathered).
using CandidateSearch = std::function<Result<CandidateLists>(std::span<const std::int64_t> limit)>;

// draw_per_class over candidate lists from anywhere; class ids are at most top_class.
Result<std::vector<std::int64_t>> draw_per_class(const CandidateSearch& smallest, std::uint16_t top_class,
                                                 const SplitOptions& options, const PixelCheck& check);

// The validity flags of every scene pixel (a pass over the whole scene).
using MaskPass = std::function<Result<std::vector<std::uint8_t>>()>;

// The training pixels of either split: a count per class checks only what the draw
// reaches; a fraction's counts depend on every class member's validity (the mask).
Result<std::vector<std::int64_t>> training_pixels(std::span<const std::uint16_t> truth, const SplitOptions& options,
                                                  const PixelCheck& check, const MaskPass& mask);

}  // namespace hb::classify
