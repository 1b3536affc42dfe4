// Exact duplicate pixels of a raw tile, for scoring each distinct spectrum once
// (src/dedup: the hopscotch hash table). Pixels are compared by their stored bytes, so
// a duplicate is bit-identical and gets bit-identical scores.
#pragma once

#include "src/base/error.hpp"
#include "io/tile.hpp"
#include "src/backend/backend.hpp"
#include "src/dedup/dedup.hpp"
#include "src/sam/scorer.hpp"

namespace hb::sam {

// The duplicates among the tile's core pixels.
Result<dedup::Duplicates> find_duplicate_pixels(const io::Tile& tile, BackendKind backend);

// A one-row tile holding the core pixels d.unique_rows, in order.
io::Tile unique_pixel_tile(const io::Tile& tile, const dedup::Duplicates& d);

// Scores of the unique pixels copied back to every pixel of the tile.
void scatter_scores(const TileScores& unique, const dedup::Duplicates& d, std::int64_t references, TileScores& out);

}  // namespace hb::sam
