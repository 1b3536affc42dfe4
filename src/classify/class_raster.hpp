// A class raster (ground truth: one integer band aligned with the scene, 0 = unlabelled)
// read as class ids.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "io/cube.hpp"

namespace hb::classify {

// The truth raster as class ids, checked against the scene's shape: all of it, or the
// given rows (a rank's share).
Result<std::vector<std::uint16_t>> read_class_raster(const io::Cube& truth, const io::CubeShape& scene_shape,
                                                     std::optional<RowRange> rows = std::nullopt);

}  // namespace hb::classify
