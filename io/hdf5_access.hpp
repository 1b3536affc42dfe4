// How the HDF5 cube is reached: the file driver (sec2 for one rank, MPI-IO with
// collective metadata for several), transfer property lists (collective when parallel),
// row selections, and how ranks agree on failures so that no rank is left waiting
// alone in a collective call.
#pragma once

#include <hdf5.h>

#include <string>

#include "src/base/error.hpp"
#include "io/hdf5_handle.hpp"
#include "io/metadata.hpp"
#include "io/tile.hpp"
#include "mpi/comm.hpp"

namespace hb::io::h5 {

// `comm` when it has several ranks, nullptr otherwise (one rank uses the serial driver).
const mpi::Comm* parallel_comm(const mpi::Comm* comm);

// File access list: MPI-IO with collective metadata reads and writes when `parallel`
// is non-null; `creating` also asks for the 1.8 file format (dense attribute storage,
// so that long band or spectra name lists fit).
PropertyList file_access(const mpi::Comm* parallel, bool creating);
// Dataset transfer list: collective MPI-IO when `parallel` is non-null.
PropertyList transfer(const mpi::Comm* parallel);

// Rows [begin, end) of /cube in the file and the matching memory space; an empty
// range selects nothing (a rank taking part in a collective call with no rows).
struct RowSelection {
  Dataspace file;
  Dataspace memory;
};
RowSelection select_rows(hid_t dataset, RowRange rows, const CubeShape& shape);

// mpi::agree for an optional communicator: with none, returns `local`.
Status agree(Status local, const mpi::Comm* parallel);

// Rank 0's `value` on every rank.
std::string broadcast_from_root(std::string value, const mpi::Comm& comm);

}  // namespace hb::io::h5
