// Writing the HDF5 cube: a temporary file (the same name on every rank), /cube created
// with the chunk rule of hdf5_layout.hpp, rows written by hyperslab (collectively when
// parallel), renamed into place by commit() once every row has been written.
#include <unistd.h>

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
#include "io/posix_file.hpp"

namespace hb::io {
namespace {

constexpr const char* kCube = "/cube";

// The file's end of allocation (H5Fget_filesize: the larger of it and the end of file).
std::int64_t allocated_bytes(hid_t file) {
  hsize_t size = 0;
  return H5Fget_filesize(file, &size) < 0 ? 0 : static_cast<std::int64_t>(size);
}

class Hdf5Writer final : public CubeWriter {
 public:
  Hdf5Writer(std::string path, std::string temporary, CubeInfo info, std::optional<AtomicPath> atomic,
             h5::File file, h5::Dataset dataset, const mpi::Comm* parallel)
      : path_(std::move(path)),
        temporary_(std::move(temporary)),
        file_bytes_(allocated_bytes(file.get())),
        info_(std::move(info)),
        parallel_(parallel),
        atomic_(std::move(atomic)),
        file_(std::move(file)),
        dataset_(std::move(dataset)),
        transfer_(h5::transfer(parallel)),
        written_(static_cast<std::size_t>(info_.shape.lines), 0) {}

  // Members close in reverse order: the dataset, then the file (collectively when
  // parallel: every rank must destroy its writer), then atomic_ removes the temporary.
  ~Hdf5Writer() override {
    if (file_) release_space();
  }

  const CubeInfo& info() const override { return info_; }

  bool writes_in_step() const override { return parallel_ != nullptr; }
  bool writes_through_hdf5() const override { return true; }

  // The dataset's chunks were allocated when it was created, so the file's end of
  // allocation then is its final size: the ranks' shares of rows reserve the same shares
  // of that size, whose union is the whole file. No HDF5 call here: reserve() may run on
  // another thread while this one reads through HDF5, which is not thread-safe.
  Status reserve(RowRange rows) override {
    if (rows.empty()) return {};
    const auto size = file_bytes_;
    const auto bytes_before = [&](std::int64_t row) {
      return static_cast<std::int64_t>(static_cast<double>(size) * static_cast<double>(row) /
                                       static_cast<double>(info_.shape.lines));
    };
    const std::int64_t begin = rows.begin == 0 ? 0 : bytes_before(rows.begin);
    const std::int64_t end = rows.end == info_.shape.lines ? static_cast<std::int64_t>(size) : bytes_before(rows.end);
    auto file = PosixFile::open_write(temporary_);
    if (!file) return file.error();
    Status reserved = file->reserve(begin, end - begin);
    if (!reserved) return Error{reserved.error().kind, path_, {}, reserved.error().message};  // not the temporary
    return {};
  }

  Status write_rows(RowRange rows, std::span<const std::byte> data) override {
    HB_TRY(h5::agree(check_request(rows, data.size()), parallel_));
    if (rows.empty() && parallel_ == nullptr) return {};
    const auto selection = h5::select_rows(dataset_.get(), rows, info_.shape);
    const std::byte unused{};  // HDF5 wants a buffer even for an empty selection
    const void* buffer = rows.empty() ? &unused : data.data();
    const herr_t status = H5Dwrite(dataset_.get(), h5::memory_type(info_.type), selection.memory.get(),
                                   selection.file.get(), transfer_.get(), buffer);
    Status local;
    if (status < 0) {
      local = Error{ErrorKind::io, path_, kCube, "cannot write rows: " + h5::hdf5_error_detail(temporary_, data.size())};
      release_space();
    }
    HB_TRY(h5::agree(local, parallel_));
    if (!rows.empty())
      std::fill(written_.begin() + rows.begin, written_.begin() + rows.end, std::uint8_t{1});
    return {};
  }

  Status close() override {
    if (closed_) return {};
    if (!file_) return Error{ErrorKind::internal, path_, {}, "writer already abandoned"};
    HB_TRY(check_all_rows_written());
    dataset_.reset();
    Status closed;
    if (!file_.reset()) closed = io_error(path_, "cannot close the HDF5 file: " + h5::hdf5_error_detail(temporary_, 1));
    HB_TRY(h5::agree(closed, parallel_));
    // Rank 0 alone owns the temporary: it finishes it once every rank has closed it.
    Status finished;
    if (atomic_) finished = finish(atomic_->temporary());
    HB_TRY(h5::agree(finished, parallel_));
    closed_ = true;
    return {};
  }

  Status commit() override {
    HB_TRY(close());
    Status renamed;
    if (atomic_) renamed = atomic_->commit();
    return h5::agree(renamed, parallel_);
  }

 private:
  // A file that will never be committed is emptied at once: closing an HDF5 file
  // flushes its metadata, and on a full disk a failed flush leaves HDF5 to crash when
  // MPI ends. The emptied blocks make room for every open file's flush.
  void release_space() {
    if (!space_released_) (void)::truncate(temporary_.c_str(), 0);
    space_released_ = true;
  }

  Status check_request(RowRange rows, std::size_t data_bytes) const {
    if (!file_) return Error{ErrorKind::internal, path_, {}, "writer already closed"};
    if (space_released_) return Error{ErrorKind::io, path_, kCube, "an earlier write failed; output abandoned"};
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

  std::string path_;
  std::string temporary_;  // the same name on every rank
  std::int64_t file_bytes_ = 0;  // the file's size once every row is written
  bool space_released_ = false;   // a write failed: the file is emptied and never committed
  bool closed_ = false;
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
  // Chunks get their file addresses now, as parallel HDF5 requires anyway: one rank and
  // many lay the file out alike, and reserve() knows the file's final size.
  H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY);
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
                                                     const mpi::Comm* comm, const std::string& reported_as) {
  h5::silence_hdf5_errors();
  const std::string& name = reported_as.empty() ? path : reported_as;
  HB_TRY(check_shape(info, name));
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
    return io_error(name, "cannot create temporary file " + temporary + ": " + h5::hdf5_error_detail());
  HB_TRY(h5::write_format_marker(file.get(), name));
  auto dataset = create_dataset(file.get(), info, name);
  if (!dataset) return dataset.error();
  HB_TRY(h5::write_metadata(dataset->get(), info.meta, name));
  return std::unique_ptr<CubeWriter>(std::make_unique<Hdf5Writer>(
      name, temporary, info, std::move(atomic), std::move(file), std::move(*dataset), parallel));
}

}  // namespace hb::io
