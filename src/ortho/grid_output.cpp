#include "src/ortho/grid_output.hpp"

#include <cstring>
#include <limits>
#include <type_traits>

namespace hb::ortho {

io::CubeInfo grid_output_info(const io::CubeInfo& product, const io::GltGrid& grid, const std::string& product_path) {
  io::CubeInfo info = product;
  info.shape = {grid.lines, grid.samples, product.shape.bands};
  io::Metadata& meta = info.meta;
  meta.map_info = grid.map_info;
  meta.coordinate_system_string = grid.coordinate_system_string;
  meta.geotransform = grid.geotransform;
  meta.spatial_ref = grid.spatial_ref;
  meta.description = "orthorectified " + product_path + (product.meta.description.empty() ? "" : ": " + product.meta.description);
  return info;
}

std::vector<std::byte> fill_pixel(const io::CubeInfo& info) {
  const std::size_t sample = bytes_per_sample(info.type);
  std::vector<std::byte> pixel(static_cast<std::size_t>(info.shape.bands) * sample);
  visit_data_type(info.type, [&]<class T>(T) {
    T value{};
    if constexpr (std::is_floating_point_v<T>) value = std::numeric_limits<T>::quiet_NaN();
    else if (info.meta.data_ignore_value) value = static_cast<T>(*info.meta.data_ignore_value);
    for (std::size_t b = 0; b < static_cast<std::size_t>(info.shape.bands); ++b)
      std::memcpy(pixel.data() + b * sample, &value, sample);
  });
  return pixel;
}

}  // namespace hb::ortho
