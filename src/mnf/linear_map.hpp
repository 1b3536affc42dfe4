// An affine map applied to every valid pixel of a tile: y = Mᵀ (x - center) + offset,
// x the pixel's used bands. Forward MNF/PCA (components) and denoising are both this.
#pragma once

#include <limits>
#include <vector>

#include "src/linalg/matrix.hpp"

namespace hb::mnf {

struct LinearMap {
  std::vector<double> center;  // [used bands], subtracted first
  linalg::Matrix matrix;       // [used bands x outputs]
  std::vector<double> offset;  // [outputs], added last; empty = zeros
  // Written to every output of an excluded pixel (see PixelRules). NaN keeps fill
  // distinguishable from any component value in float32 output.
  float fill = std::numeric_limits<float>::quiet_NaN();

  std::int64_t outputs() const { return matrix.cols; }
};

}  // namespace hb::mnf
