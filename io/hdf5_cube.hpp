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
#include "io/hdf5_handle.hpp"

namespace hb::io {

Result<std::unique_ptr<Cube>> open_hdf5_cube(const std::string& path, const mpi::Comm* comm);

// Errors name `reported_as` when given (a hidden stage of another output), else `path`.
Result<std::unique_ptr<CubeWriter>> create_hdf5_cube(const std::string& path, const CubeInfo& info,
                                                     const mpi::Comm* comm, const std::string& reported_as = {});

// The pieces other HDF5 products (EMIT granules, io/emit) reuse: opening the file
// (sec2, or MPI-IO when `parallel`), checking a 3-D dataset named `name` in errors,
// and a cube reading row hyperslabs of any such dataset, collectively when `parallel`.
Result<h5::File> open_hdf5_file(const std::string& path, const mpi::Comm* parallel);
Result<CubeShape> read_hdf5_shape(hid_t dataset, const std::string& path, const std::string& name);
Result<DataType> read_hdf5_type(hid_t dataset, const std::string& path, const std::string& name);
std::unique_ptr<Cube> hdf5_dataset_cube(const std::string& path, const std::string& dataset_name, CubeInfo info,
                                        h5::File file, h5::Dataset dataset, const mpi::Comm* parallel);

}  // namespace hb::io
