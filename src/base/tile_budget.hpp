// Scene rows per tile from a memory budget: the one rule every streaming pass uses
// (knn, sam, synth, mnf), each with its own bytes per row.
#pragma once

#include <algorithm>
#include <cstdint>

namespace hb {

// As many rows of `bytes_per_row` as fit `tile_budget_bytes`, at least one and at most
// the scene's `lines`.
inline std::int64_t tile_rows_for(std::int64_t bytes_per_row, std::int64_t tile_budget_bytes, std::int64_t lines) {
  const std::int64_t fitting = tile_budget_bytes / std::max<std::int64_t>(1, bytes_per_row);
  return std::clamp<std::int64_t>(fitting, 1, std::max<std::int64_t>(1, lines));
}

}  // namespace hb
