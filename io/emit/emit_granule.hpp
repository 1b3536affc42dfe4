// EMIT granules (L2A reflectance, L1B radiance, L2A mask: netCDF4, read as HDF5): the
// root variable `reflectance`, `radiance` or `mask` [downtrack, crosstrack, bands] is
// the cube (lines = downtrack, samples = crosstrack); band centres, widths, good bands
// and mask band names come from /sensor_band_parameters, no-data from the variable's
// _FillValue, and the georeference (global geotransform, spatial_ref, /location arrays)
// travels as metadata. One rank reading alone inflates the (usually deflated, chunked)
// variable on every core (io/emit/chunk_reader.hpp); under several ranks reads are
// collective hyperslabs like any HDF5 cube's.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "io/cube.hpp"

namespace hb::io::emit {

// The granule's root variable when `path` is an HDF5 file without /cube that holds one
// of EMIT's; nullopt otherwise (the HDF5 cube reader then reports what is wrong).
std::optional<std::string> granule_variable(const std::string& path);

Result<std::unique_ptr<Cube>> open_granule(const std::string& path, const std::string& variable,
                                           const mpi::Comm* comm);

}  // namespace hb::io::emit
