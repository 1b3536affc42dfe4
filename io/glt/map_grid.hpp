// Map grids in the two spellings hyperbatch meets: ENVI's `map info` (a tie point, pixel
// sizes, an optional rotation) and GDAL's affine geotransform with a WKT spatial
// reference. Conversions follow GDAL's ENVI driver, so GDAL places both spellings alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "io/metadata.hpp"

namespace hb::io {

// The geotransform of an ENVI map info (contents without braces); nullopt when it does
// not hold a tie point and pixel sizes.
std::optional<std::vector<double>> geotransform_from_map_info(const std::string& map_info);

// The ENVI map info of a geotransform: "Geographic Lat/Lon" when `wkt` is geographic,
// "Arbitrary" otherwise (the coordinate system string then names the reference).
std::string map_info_from_geotransform(const std::vector<double>& geotransform, const std::string& wkt);

// Completes whichever spelling is missing: geotransform/spatial_ref from map info and
// coordinate system string, or map info / coordinate system string from a geotransform.
void complete_georeference(Metadata& meta);

}  // namespace hb::io
