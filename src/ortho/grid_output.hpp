// What an orthorectified product is: the product's metadata on the GLT's grid, and the
// no-data pixel that fills grid pixels without a source.
#pragma once

#include <cstddef>
#include <vector>

#include "io/glt/glt.hpp"
#include "io/metadata.hpp"

namespace hb::ortho {

io::CubeInfo grid_output_info(const io::CubeInfo& product, const io::GltGrid& grid, const std::string& product_path);

// One pixel (all bands) of no-data: NaN for floating-point types, the data ignore value
// or 0 for integer types.
std::vector<std::byte> fill_pixel(const io::CubeInfo& info);

}  // namespace hb::ortho
