// Cloud-Optimized GeoTIFF outputs (any output named .tif/.tiff), through GDAL's COG
// driver in the GDAL module (io/gtiff/gdal_module.hpp).
//
// Rows are staged in a hidden raw file beside the output (an uncommitted ENVI writer:
// every rank writes its own rows into it, as for ENVI outputs); close() then has rank 0
// translate the staged raster into the COG under a temporary name, and commit() renames
// it. The staged file is removed in every case. Class maps (file type ENVI
// Classification) become uint16 with a colour table and category names; other cubes
// keep their type, one band per band, with band descriptions and wavelengths. The grid
// comes from Metadata::geotransform/spatial_ref (or the ENVI map info); no-data is the
// data ignore value, else NaN for floating-point and 0 (unclassified) for class maps.
#pragma once

#include <memory>
#include <string>

#include "io/cube.hpp"

namespace hb::io {

Result<std::unique_ptr<CubeWriter>> create_gtiff_cube(const std::string& path, const CubeInfo& info,
                                                      const mpi::Comm* comm = nullptr);

}  // namespace hb::io
