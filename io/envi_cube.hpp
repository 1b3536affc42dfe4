// ENVI cubes on disk: a reader of row ranges for any interleave, data type and byte
// order, in bounded memory; and a writer that writes NAME.hdr + NAME.img atomically.
#pragma once

#include <memory>
#include <string>

#include "io/cube.hpp"
#include "io/envi_header.hpp"

namespace hb::mpi {
class Comm;
}

namespace hb::io {

// Opens a scene by its header or data file; checks that the data file exists and that
// its size matches header offset + lines * samples * bands * bytes exactly.
Result<std::unique_ptr<Cube>> open_envi_cube(const std::string& path);

// `path` may name the header (NAME.hdr) or the data file (NAME.img); both are written,
// first under temporary names, then renamed by commit().
// With a communicator of several ranks, every rank writes its rows into the one data
// file (rank 0 creates it and names it to the others; pwrite of disjoint rows needs no
// MPI-IO), and commit() is collective: once every row is written, rank 0 writes the
// header and renames both files.
Result<std::unique_ptr<CubeWriter>> create_envi_cube(const std::string& path, const CubeInfo& info,
                                                     Interleave interleave, ByteOrder byte_order,
                                                     const mpi::Comm* comm = nullptr);

}  // namespace hb::io
