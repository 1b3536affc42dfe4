#include "io/hdf5_access.hpp"

#include <utility>

#include "mpi/agree.hpp"

namespace hb::io::h5 {

const mpi::Comm* parallel_comm(const mpi::Comm* comm) {
  return comm != nullptr && comm->is_parallel() ? comm : nullptr;
}

PropertyList file_access(const mpi::Comm* parallel, bool creating) {
  PropertyList fapl(H5Pcreate(H5P_FILE_ACCESS));
  if (creating) H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_LATEST);
  if (parallel != nullptr) {
    H5Pset_fapl_mpio(fapl.get(), parallel->handle(), MPI_INFO_NULL);
    H5Pset_all_coll_metadata_ops(fapl.get(), true);
    H5Pset_coll_metadata_write(fapl.get(), true);
  }
  return fapl;
}

PropertyList transfer(const mpi::Comm* parallel) {
  PropertyList dxpl(H5Pcreate(H5P_DATASET_XFER));
  if (parallel != nullptr) H5Pset_dxpl_mpio(dxpl.get(), H5FD_MPIO_COLLECTIVE);
  return dxpl;
}

RowSelection select_rows(hid_t dataset, RowRange rows, const CubeShape& shape) {
  RowSelection selection;
  selection.file = Dataspace(H5Dget_space(dataset));
  if (rows.empty()) {
    const hsize_t one = 1;
    selection.memory = Dataspace(H5Screate_simple(1, &one, nullptr));
    H5Sselect_none(selection.file.get());
    H5Sselect_none(selection.memory.get());
    return selection;
  }
  const hsize_t start[3] = {static_cast<hsize_t>(rows.begin), 0, 0};
  const hsize_t count[3] = {static_cast<hsize_t>(rows.rows()), static_cast<hsize_t>(shape.samples),
                            static_cast<hsize_t>(shape.bands)};
  H5Sselect_hyperslab(selection.file.get(), H5S_SELECT_SET, start, nullptr, count, nullptr);
  selection.memory = Dataspace(H5Screate_simple(3, count, nullptr));
  return selection;
}

Status agree(Status local, const mpi::Comm* parallel) {
  return parallel == nullptr ? local : mpi::agree(std::move(local), *parallel);
}

std::string broadcast_from_root(std::string value, const mpi::Comm& comm) {
  return comm.broadcast(std::move(value), 0);
}

}  // namespace hb::io::h5
