// Geometric look-up tables (GLT): for every pixel of a map grid, the pixel of the
// sensor-geometry scene it shows. Two kinds:
//  * EMIT granules (netCDF4/HDF5): location/glt_x (crosstrack = sample) and
//    location/glt_y (downtrack = line), 1-based, 0 = no data; the grid from the global
//    attributes geotransform (GDAL order) and spatial_ref (WKT); the scene's shape from
//    the downtrack and crosstrack dimensions.
//  * ENVI GLTs as AVIRIS / AVIRIS-NG ship them (*_glt, *_ort_glt): 2 bands of int16 or
//    int32, band 1 the sample and band 2 the line, 1-based, negative = filled from a
//    neighbour (used by its absolute value), 0 = no data; the grid from map info and
//    coordinate system string.
// Read by rows of the grid; entries come out 0-based with -1 for no data.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/metadata.hpp"
#include "src/base/error.hpp"
#include "src/base/row_range.hpp"

namespace hb::io {

struct GltGrid {
  std::int64_t lines = 0;
  std::int64_t samples = 0;
  std::vector<double> geotransform;  // 6 values, empty when the GLT does not say
  std::string spatial_ref;           // WKT
  std::string map_info;              // ENVI spelling of the same grid
  std::string coordinate_system_string;
};

// Source pixels of some grid rows: 0-based, -1 where the grid has no data.
struct GltRows {
  std::vector<std::int32_t> sample;
  std::vector<std::int32_t> line;
};

class Glt {
 public:
  virtual ~Glt() = default;
  virtual const std::string& path() const = 0;
  virtual const GltGrid& grid() const = 0;
  // The scene shape the GLT was made for (lines, samples), when the file records it.
  virtual std::optional<CubeShape> source_shape() const { return std::nullopt; }
  // How errors name the sample and the line entries ("location/glt_x", "band 1").
  virtual std::string sample_field() const = 0;
  virtual std::string line_field() const = 0;
  virtual Status read_rows(RowRange rows, GltRows& out) const = 0;
};

// An EMIT granule when the name is HDF5-like (.nc, .h5), else an ENVI GLT. Malformed
// or of the wrong kind: bad input naming the file and the field.
Result<std::unique_ptr<Glt>> open_glt(const std::string& path);

// 1-based file entry -> 0-based index, -1 for no data (0); negative entries by absolute value.
inline std::int32_t glt_index(std::int64_t entry) {
  if (entry == 0) return -1;
  return static_cast<std::int32_t>((entry < 0 ? -entry : entry) - 1);
}

}  // namespace hb::io
