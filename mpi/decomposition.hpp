// How scene rows are split over ranks. Rows are grouped into a fixed grid of tiles whose
// height does not depend on the rank count, and each rank gets a contiguous run of
// tiles whose total weight (valid pixels, plus a share for reading every pixel) is
// balanced. Because tiles are the same for any rank count, per-tile partial results
// combined in global tile order give the same answer for 1 rank or 64.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "src/base/row_range.hpp"

namespace hb::mpi {

class Comm;

// Rows [0, lines) cut into tiles of `rows_per_tile` (the last one shorter).
struct TileGrid {
  std::int64_t lines = 0;
  std::int64_t rows_per_tile = 1;

  std::int64_t count() const { return lines <= 0 ? 0 : (lines + rows_per_tile - 1) / rows_per_tile; }
  RowRange rows(std::int64_t tile) const {
    return {tile * rows_per_tile, std::min(lines, (tile + 1) * rows_per_tile)};
  }
};

// A rank's share: tiles [first_tile, end_tile) of the grid; possibly empty.
struct Block {
  std::int64_t first_tile = 0;
  std::int64_t end_tile = 0;
  RowRange rows;

  std::int64_t tiles() const { return end_tile - first_tile; }
  bool empty() const { return end_tile <= first_tile; }
};

// Cuts `weights` (one per tile, >= 0) into `parts` contiguous runs of nearly equal
// weight: cut r is the first tile whose prefix weight reaches r/parts of the total.
// Returns parts + 1 tile indices (0 first, weights.size() last). Deterministic: every
// rank computes the same cuts from the same weights.
std::vector<std::int64_t> balanced_cuts(std::span<const double> weights, int parts);

// Block of `part` for the given cuts.
Block block_of(const TileGrid& grid, std::span<const std::int64_t> cuts, int part);

// Weight of a tile for balancing: its valid pixels plus `read_share` of all its pixels
// (every pixel is read and widened even when it is fill; measured compute per valid
// pixel is ~8x the read of one, see mpi/README.md).
inline constexpr double kReadShare = 0.125;
double tile_weight(std::int64_t valid_pixels, std::int64_t pixels);

// The cuts of `grid` for `parts` ranks balanced by the tile_weight of each tile, given
// its valid pixels (`tile_valid`, one count per tile) and the scene's `samples` a row.
std::vector<std::int64_t> cuts_by_valid_pixels(const TileGrid& grid, std::span<const std::int64_t> tile_valid,
                                               std::int64_t samples, int parts);

// Per-row counts summed over each tile of `grid` (row_counts holds grid.lines counts).
std::vector<std::int64_t> tile_sums(const TileGrid& grid, std::span<const std::int64_t> row_counts);

// Rows per balancing unit: the work tile, or less so that each rank gets at least 8
// units to choose from (a small scene in one budget-sized tile would otherwise go to
// one rank), rounded up to a multiple of `multiple` (MNF: whole reduction granules).
std::int64_t balance_rows(std::int64_t lines, std::int64_t tile_rows, int ranks, std::int64_t multiple = 1);

// A rank's even share of rows [0, lines): no balancing, for work spread before the
// blocks are known (reading the truth raster, reserving output space).
RowRange even_rows(std::int64_t lines, const Comm& comm);

// This rank's tiles of `tile_rows` rows: a contiguous block of [0, lines) balanced as
// MNF balances, every row weighing alike (SAM, ortho: work even along the rows).
std::vector<RowRange> rank_row_tiles(std::int64_t lines, std::int64_t tile_rows, const Comm& comm);

// The largest number of tiles any rank holds: collective readers and writers make this
// many calls on every rank (empty ones past a rank's own tiles).
std::int64_t max_tiles(std::span<const std::int64_t> cuts);

}  // namespace hb::mpi
