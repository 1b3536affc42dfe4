// What a scene says about itself, independent of how its bytes are stored.
// ENVI headers and HDF5 cube attributes both map onto CubeInfo.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "src/base/data_type.hpp"

namespace hb::io {

struct CubeShape {
  std::int64_t lines = 0;
  std::int64_t samples = 0;
  std::int64_t bands = 0;

  std::int64_t pixels() const { return lines * samples; }
  bool operator==(const CubeShape&) const = default;
};

// How stored numbers become physical values, band by band: physical = gain * stored +
// offset. Empty gain: the stored numbers are the physical values.
struct Scaling {
  std::vector<double> gain;
  std::vector<double> offset;
  std::string units;   // the physical units when known ("microwatts/cm^2/nm/sr")
  std::string source;  // where it came from: a header key, a .gain file, attributes

  bool applies() const { return !gain.empty(); }
};

struct Metadata {
  std::string description;
  std::string file_type = "ENVI Standard";  // ENVI Classification, ENVI Spectral Library, ...
  std::vector<double> wavelength;            // band centres, empty when unknown
  std::vector<double> fwhm;
  std::string wavelength_units;              // as written: Nanometers, Micrometers, ...
  std::optional<double> data_ignore_value;   // no-data value
  std::vector<int> bbl;                      // bad band list: 1 good, 0 bad; empty = all good
  std::vector<std::string> band_names;
  std::string map_info;                      // raw "{...}" contents, passed through
  std::string coordinate_system_string;      // raw contents, passed through
  // The product's geolocation arrays by HDF5 path (EMIT's /location/lat, ...).
  std::vector<std::string> geolocation;
  Scaling scaling;
  // Classification files.
  std::optional<int> classes;
  std::vector<std::string> class_names;
  std::vector<int> class_lookup;             // r,g,b triples
  // Spectral libraries.
  std::vector<std::string> spectra_names;
  // Keys we do not interpret, kept in order and written back verbatim (key, raw value).
  std::vector<std::pair<std::string, std::string>> extra;
  // Where the scene came from, and the layout of the ENVI file it is or came from:
  // kept through ingest so that export reproduces the original bytes by default.
  std::string source_file;
  std::optional<Interleave> envi_interleave;
  std::optional<ByteOrder> envi_byte_order;
  // Where the grid lies on the map (empty = not on a map): GDAL's affine geotransform
  // (x0, dx, row rotation, y0, column rotation, dy) and the spatial reference as WKT.
  // ENVI headers carry the same as map info / coordinate system string
  // (io/glt/map_grid.hpp converts).
  std::vector<double> geotransform;
  std::string spatial_ref;

  bool band_is_good(std::int64_t band) const {
    return bbl.empty() || bbl[static_cast<std::size_t>(band)] != 0;
  }
};

struct CubeInfo {
  CubeShape shape;
  DataType type = DataType::f32;
  Metadata meta;

  std::int64_t bytes_per_pixel() const {
    return shape.bands * static_cast<std::int64_t>(bytes_per_sample(type));
  }
  std::int64_t bytes_per_row() const { return shape.samples * bytes_per_pixel(); }
  std::int64_t total_bytes() const { return shape.lines * bytes_per_row(); }
};

}  // namespace hb::io
