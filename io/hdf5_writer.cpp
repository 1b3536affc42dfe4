// Writing the HDF5 cube: a temporary file (the same name on every rank), /cube created
// with the chunk rule of hdf5_layout.hpp, rows written by hyperslab (collectively when
// parallel), renamed into place by commit() once every row has been written.
#include <algorithm>
#include <limits>
#include <optional>
#include <vector>

#include "io/atomic_file.hpp"
#include "io/hdf5_access.hpp"
#include "io/hdf5_cube.hpp"
#include "io/hdf5_handle.hpp"
#include "io/hdf5_layout.hpp"
#include "io/hdf5_metadata.hpp"

namespace hb::io {
namespace {

constexpr const char* kCube = "/cube";

class Hdf5Writer final : public CubeWriter {
 public:
  Hdf5Writer(std::string path, CubeInfo info, std::optional<AtomicPath> atomic, h5::File file,
             h5::Dataset dataset, const mpi::Comm* parallel)
      : path_(std::move(path)),
        info_(std::move(info)),
        parallel_(parallel),
        atomic_(std::move(atomic)),
        file_(std::move(file)),
        dataset_(std::move(dataset)),
        transfer_(h5::transfer(parallel)),
        written_(static_cast<std::size_t>(info_.shape.lines), 0) {}

  // Members close in reverse order: the dataset, then the file (collectively when
  // parallel: every rank must destroy its writer), then atomic_ removes the temporary.
  ~Hdf5Writer() override = default;

  const CubeInfo& info() const override { return info_; }

  bool writes_in_step() const override { return parallel_ != nullptr; }

  Status write_rows(RowRange rows, std::span<const std::byte> data) override {
    HB_TRY(h5::agree(check_request(rows, data.size()), parallel_, path_));
    if (rows.empty() && parallel_ == nullptr) return {};
    const auto selection = h5::select_rows(dataset_.get(), rows, info_.shape);
    const std::byte unused{};  // HDF5 wants a buffer even for an empty selection
    const void* buffer = rows.empty() ? &unused : data.data();
    const herr_t status = H5Dwrite(dataset_.get(), h5::memory_type(info_.type), selection.memory.get(),
                                   selection.file.get(), transfer_.get(), buffer);
    Status local;
    if (status < 0)
      local = Error{ErrorKind::io, path_, kCube, "cannot write rows: " + h5::hdf5_error_detail()};
    HB_TRY(h5::agree(local, parallel_, path_));
    if (!rows.empty())
      std::fill(written_.begin() + rows.begin, written_.begin() + rows.end, std::uint8_t{1});
    return {};
  }

  Status commit() override {
    if (!file_) return Error{ErrorKind::internal, path_, {}, "writer already committed or closed"};
    HB_TRY(check_all_rows_written());
    dataset_.reset();
    Status closed;
    if (!file_.reset()) closed = io_error(path_, "cannot close the HDF5 file: " + h5::hdf5_error_detail());
    HB_TRY(h5::agree(closed, parallel_, path_));
    return rename_into_place();
  }

 private:
  Status check_request(RowRange rows, std::size_t data_bytes) const {
    if (!file_) return Error{ErrorKind::internal, path_, {}, "writer already committed or closed"};
    const std::int64_t row_count = rows.empty() ? 0 : rows.rows();
    if (!rows.empty() && (rows.begin < 0 || rows.end > info_.shape.lines))
      return Error{ErrorKind::internal, path_, kCube, "row range out of the scene"};
    if (static_cast<std::int64_t>(data_bytes) != row_count * info_.bytes_per_row())
      return Error{ErrorKind::internal, path_, kCube, "data size does not match the rows"};
    return {};
  }

  // The union over ranks of the rows each one wrote must be every row.
  Status check_all_rows_written() const {
    std::vector<std::uint8_t> all = written_;
    if (parallel_ != nullptr)
      MPI_Allreduce(MPI_IN_PLACE, all.data(), static_cast<int>(all.size()), MPI_UINT8_T, MPI_MAX,
                    parallel_->handle());
    const auto missing = std::find(all.begin(), all.end(), std::uint8_t{0});
    if (missing == all.end()) return {};
    return Error{ErrorKind::internal, path_, kCube,
                 "row " + std::to_string(missing - all.begin()) + " of " +
                     std::to_string(info_.shape.lines) + " was never written; output not committed"};
  }

  // Rank 0 alone owns the temporary and renames it once every rank has closed the file.
  Status rename_into_place() {
    Status renamed;
    if (parallel_ != nullptr) parallel_->barrier();
    if (atomic_) renamed = atomic_->commit();
    if (parallel_ != nullptr) {
      int ok = renamed.ok() ? 1 : 0;
      MPI_Bcast(&ok, 1, MPI_INT, 0, parallel_->handle());
      if (!atomic_ && ok == 0) renamed = io_error(path_, "rank 0 could not rename the temporary file");
    }
    return renamed;
  }

  std::string path_;
  CubeInfo info_;
  const mpi::Comm* parallel_;
  std::optional<AtomicPath> atomic_;  // rank 0 (or the only rank) only
  h5::File file_;
  h5::Dataset dataset_;
  h5::PropertyList transfer_;
  std::vector<std::uint8_t> written_;  // 1 for each row this rank wrote
};

Status check_shape(const CubeInfo& info, const std::string& path) {
  const auto& shape = info.shape;
  if (shape.lines <= 0 || shape.samples <= 0 || shape.bands <= 0)
    return bad_input(path, "shape", "lines, samples and bands must be positive");
  if (shape.lines > std::numeric_limits<int>::max())
    return bad_input(path, "shape", "too many lines");
  return {};
}

Result<h5::Dataset> create_dataset(hid_t file, const CubeInfo& info, const std::string& path) {
  const hsize_t dims[3] = {static_cast<hsize_t>(info.shape.lines),
                           static_cast<hsize_t>(info.shape.samples),
                           static_cast<hsize_t>(info.shape.bands)};
  const auto chunk = h5::chunk_shape(info);
  h5::Dataspace space(H5Screate_simple(3, dims, nullptr));
  h5::PropertyList dcpl(H5Pcreate(H5P_DATASET_CREATE));
  H5Pset_chunk(dcpl.get(), 3, chunk.data());
  // Every row is written before commit, so fill values would only cost a pass of writes.
  H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER);
  // No modification times in object headers: the same inputs give the same bytes.
  H5Pset_obj_track_times(dcpl.get(), false);
  h5::Dataset dataset(H5Dcreate2(file, kCube, h5::file_type(info.type), space.get(), H5P_DEFAULT,
                                 dcpl.get(), H5P_DEFAULT));
  if (!dataset)
    return Error{ErrorKind::io, path, kCube, "cannot create dataset: " + h5::hdf5_error_detail()};
  return dataset;
}

}  // namespace

Result<std::unique_ptr<CubeWriter>> create_hdf5_cube(const std::string& path, const CubeInfo& info,
                                                     const mpi::Comm* comm) {
  h5::silence_hdf5_errors();
  HB_TRY(check_shape(info, path));
  const mpi::Comm* parallel = h5::parallel_comm(comm);
  // AtomicPath names the temporary after the pid, which differs per rank: rank 0 names it.
  std::optional<AtomicPath> atomic;
  if (parallel == nullptr || parallel->is_root()) atomic.emplace(path);
  std::string temporary = atomic ? atomic->temporary() : std::string();
  if (parallel != nullptr) temporary = h5::broadcast_from_root(temporary, *parallel);

  const auto fapl = h5::file_access(parallel, true);
  h5::PropertyList fcpl(H5Pcreate(H5P_FILE_CREATE));
  H5Pset_obj_track_times(fcpl.get(), false);  // the root group too: reruns write identical bytes
  h5::File file(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()));
  if (!file)
    return io_error(path, "cannot create temporary file " + temporary + ": " + h5::hdf5_error_detail());
  HB_TRY(h5::write_format_marker(file.get(), path));
  auto dataset = create_dataset(file.get(), info, path);
  if (!dataset) return dataset.error();
  HB_TRY(h5::write_metadata(dataset->get(), info.meta, path));
  return std::unique_ptr<CubeWriter>(std::make_unique<Hdf5Writer>(
      path, info, std::move(atomic), std::move(file), std::move(*dataset), parallel));
}

}  // namespace hb::io
