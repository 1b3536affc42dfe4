// What the statistics pass (pipeline.cpp) and the transform passes
// (pipeline_transform.cpp) share.
#pragma once

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "io/units.hpp"
#include "src/base/row_range.hpp"
#include "src/mnf/tile_ops.hpp"

namespace hb::mnf::detail {

inline void log_rate(const char* stage, double seconds, std::int64_t bytes) {
  spdlog::info("{}: {:.3f} s, {:.1f} MB/s", stage, seconds,
               static_cast<double>(bytes) / 1e6 / std::max(seconds, 1e-9));
}

// Where a pass reads the scene from: operations that make samples physical themselves
// take a physical view's stored numbers (int16 crosses to a GPU as 2 bytes, not 4).
inline io::DeviceSource tile_source(const io::Cube& cube, const TileOps& ops) {
  return ops.takes_stored_units() ? io::device_source(cube) : io::DeviceSource{cube, nullptr};
}

// The rows of `block` cut into tiles of at most `rows`.
inline std::vector<RowRange> split_rows(RowRange block, std::int64_t rows) {
  std::vector<RowRange> tiles;
  for (std::int64_t r = block.begin; r < block.end; r += rows) tiles.push_back({r, std::min(block.end, r + rows)});
  return tiles;
}

}  // namespace hb::mnf::detail
