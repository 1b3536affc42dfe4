#include "mpi/decomposition.hpp"

#include "mpi/comm.hpp"

#include <algorithm>
#include <numeric>

namespace hb::mpi {

std::vector<std::int64_t> balanced_cuts(std::span<const double> weights, int parts) {
  const auto tiles = static_cast<std::int64_t>(weights.size());
  std::vector<double> prefix(weights.size() + 1, 0.0);
  for (std::size_t t = 0; t < weights.size(); ++t) prefix[t + 1] = prefix[t] + std::max(0.0, weights[t]);
  const double total = prefix.back();
  std::vector<std::int64_t> cuts(static_cast<std::size_t>(parts) + 1, tiles);
  cuts[0] = 0;
  for (int r = 1; r < parts; ++r) {
    if (total <= 0.0) {  // nothing to weigh: split by tile count
      cuts[static_cast<std::size_t>(r)] = tiles * r / parts;
      continue;
    }
    const double target = total * r / parts;
    // First tile end whose prefix reaches the target, rounded to the nearer side.
    auto it = std::lower_bound(prefix.begin(), prefix.end(), target);
    auto cut = static_cast<std::int64_t>(it - prefix.begin());
    if (cut > 0 && cut <= tiles && target - prefix[static_cast<std::size_t>(cut - 1)] < prefix[static_cast<std::size_t>(cut)] - target)
      --cut;
    cuts[static_cast<std::size_t>(r)] = std::clamp(cut, cuts[static_cast<std::size_t>(r - 1)], tiles);
  }
  return cuts;
}

Block block_of(const TileGrid& grid, std::span<const std::int64_t> cuts, int part) {
  Block b;
  b.first_tile = cuts[static_cast<std::size_t>(part)];
  b.end_tile = cuts[static_cast<std::size_t>(part) + 1];
  if (b.empty()) {
    b.rows = {grid.lines, grid.lines};
    return b;
  }
  b.rows = {grid.rows(b.first_tile).begin, grid.rows(b.end_tile - 1).end};
  return b;
}

double tile_weight(std::int64_t valid_pixels, std::int64_t pixels) {
  return static_cast<double>(valid_pixels) + kReadShare * static_cast<double>(pixels);
}

std::vector<std::int64_t> cuts_by_valid_pixels(const TileGrid& grid, std::span<const std::int64_t> tile_valid,
                                               std::int64_t samples, int parts) {
  std::vector<double> weights(tile_valid.size());
  for (std::size_t t = 0; t < weights.size(); ++t)
    weights[t] = tile_weight(tile_valid[t], grid.rows(static_cast<std::int64_t>(t)).rows() * samples);
  return balanced_cuts(weights, parts);
}

std::vector<std::int64_t> tile_sums(const TileGrid& grid, std::span<const std::int64_t> row_counts) {
  std::vector<std::int64_t> tiles(static_cast<std::size_t>(grid.count()));
  for (std::int64_t t = 0; t < grid.count(); ++t) {
    const auto rows = grid.rows(t);
    tiles[static_cast<std::size_t>(t)] =
        std::accumulate(row_counts.begin() + rows.begin, row_counts.begin() + rows.end, std::int64_t{0});
  }
  return tiles;
}

std::int64_t balance_rows(std::int64_t lines, std::int64_t tile_rows, int ranks, std::int64_t multiple) {
  const std::int64_t units = 8 * std::int64_t{std::max(ranks, 1)};
  const std::int64_t rows = std::max<std::int64_t>(1, std::min(tile_rows, (lines + units - 1) / units));
  return (rows + multiple - 1) / multiple * multiple;
}

std::int64_t max_tiles(std::span<const std::int64_t> cuts) {
  std::int64_t most = 0;
  for (std::size_t r = 0; r + 1 < cuts.size(); ++r) most = std::max(most, cuts[r + 1] - cuts[r]);
  return most;
}

RowRange even_rows(std::int64_t lines, const Comm& comm) {
  return {lines * comm.rank() / comm.size(), lines * (comm.rank() + 1) / comm.size()};
}

std::vector<RowRange> rank_row_tiles(std::int64_t lines, std::int64_t tile_rows, const Comm& comm) {
  const TileGrid grid{lines, balance_rows(lines, tile_rows, comm.size())};
  std::vector<double> weights;
  for (std::int64_t t = 0; t < grid.count(); ++t) weights.push_back(static_cast<double>(grid.rows(t).rows()));
  const auto block = block_of(grid, balanced_cuts(weights, comm.size()), comm.rank()).rows;
  std::vector<RowRange> tiles;
  for (std::int64_t r = block.begin; r < block.end; r += tile_rows) tiles.push_back({r, std::min(block.end, r + tile_rows)});
  return tiles;
}

}  // namespace hb::mpi
