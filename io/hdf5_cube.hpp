// The HDF5 cube format: dataset /cube [lines, samples, bands] in the scene's data type,
// chunked by whole rows (see docs/formats.md), metadata as attributes on /cube.
// Row ranges are hyperslabs; with several ranks the file is opened with the MPI-IO
// driver and transfers are collective: then opening, every read_rows/write_rows call
// (an empty RowRange where a rank has nothing to do), commit() and destruction are
// collective operations that every rank of the communicator must make.
#pragma once

#include <memory>
#include <string>

#include "io/cube.hpp"

namespace hb::io {

Result<std::unique_ptr<Cube>> open_hdf5_cube(const std::string& path, const mpi::Comm* comm);

// Errors name `reported_as` when given (a hidden stage of another output), else `path`.
Result<std::unique_ptr<CubeWriter>> create_hdf5_cube(const std::string& path, const CubeInfo& info,
                                                     const mpi::Comm* comm, const std::string& reported_as = {});

}  // namespace hb::io
