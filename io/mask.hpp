// `--mask RASTER`: pixels a mask excludes read as no-data, so statistics, training and
// classification (class 0) skip them with no change to the algorithms. The mask is a
// raster of the scene's lines and samples: one band (nonzero = exclude), or an EMIT
// L2A mask granule whose flag bands named by `--mask-bands` exclude (default: its
// "Aggregate Flag"). Masked pixels get the scene's ignore value, or NaN (float scenes;
// integer scenes without an ignore value are read as float32).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/cube.hpp"

namespace hb::io {

struct MaskSpec {
  std::string path;                 // empty: no mask
  std::vector<std::string> bands;   // band names of a multi-band mask; empty: the default
};

// The scene seen through the mask. The mask is read by each rank on its own (never
// collectively), whatever the scene's reads are. Wrong shape or unknown band names are
// bad input naming the mask.
Result<std::unique_ptr<Cube>> with_mask(std::unique_ptr<Cube> scene, const MaskSpec& mask);

// The mask open_cube applies to `scene` (by path, as given on the command line), for
// this process: set once at the command line edge, like the scene units.
void set_scene_mask(const std::string& scene, MaskSpec mask);
const MaskSpec* scene_mask(const std::string& scene);

}  // namespace hb::io
