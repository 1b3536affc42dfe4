// Reading the HDF5 cube: open and validate /cube, then reads of row ranges: preads
// where the rows are plain bytes (io/hdf5_row_reads.hpp), hyperslabs otherwise. The
// writer is in hdf5_writer.cpp.
#include "io/hdf5_cube.hpp"

#include <filesystem>
#include <optional>
#include <system_error>

#include "io/envi_header.hpp"
#include "io/hdf5_access.hpp"
#include "io/hdf5_handle.hpp"
#include "io/hdf5_layout.hpp"
#include "io/hdf5_metadata.hpp"
#include "io/hdf5_row_reads.hpp"

namespace hb::io {
namespace {

constexpr const char* kCube = "/cube";

bool has_filters(hid_t dataset) {
  const h5::PropertyList creation(H5Dget_create_plist(dataset));
  return creation && H5Pget_nfilters(creation.get()) > 0;
}

class Hdf5Cube final : public Cube {
 public:
  Hdf5Cube(std::string path, std::string dataset_name, CubeInfo info, h5::File file, h5::Dataset dataset,
           const mpi::Comm* parallel)
      : path_(std::move(path)),
        dataset_name_(std::move(dataset_name)),
        info_(std::move(info)),
        parallel_(parallel),
        file_(std::move(file)),
        dataset_(std::move(dataset)),
        transfer_(h5::transfer(parallel)),
        compressed_(has_filters(dataset_.get())) {
    // A rank of several reads collectively, through the library.
    if (parallel_ == nullptr) located_ = LocatedRows::locate(path_, file_.get(), dataset_.get(), info_);
  }

  const CubeInfo& info() const override { return info_; }
  const std::string& path() const override { return path_; }
  CubeFormat format() const override { return CubeFormat::hdf5; }
  bool compressed() const override { return compressed_; }
  bool reads_through_hdf5() const override { return !located_; }

  std::int64_t bytes_on_disk() const override {
    std::error_code error;
    const auto size = std::filesystem::file_size(path_, error);
    return error ? 0 : static_cast<std::int64_t>(size);
  }

  Status read_rows(RowRange rows, std::span<std::byte> out) const override {
    HB_TRY(h5::agree(check_request(rows, out.size()), parallel_));
    if (rows.empty() && parallel_ == nullptr) return {};
    if (located_) return located_->read(rows, out);
    const auto selection = h5::select_rows(dataset_.get(), rows, info_.shape);
    std::byte unused{};  // HDF5 wants a buffer even for an empty selection
    void* buffer = rows.empty() ? &unused : out.data();
    const herr_t status = H5Dread(dataset_.get(), h5::memory_type(info_.type), selection.memory.get(),
                                  selection.file.get(), transfer_.get(), buffer);
    Status local;
    if (status < 0)
      local = Error{ErrorKind::io, path_, dataset_name_, "cannot read rows: " + h5::hdf5_error_detail()};
    return h5::agree(local, parallel_);
  }

 private:
  Status check_request(RowRange rows, std::size_t out_bytes) const {
    const std::int64_t row_count = rows.empty() ? 0 : rows.rows();
    if (!rows.empty() && (rows.begin < 0 || rows.end > info_.shape.lines))
      return Error{ErrorKind::internal, path_, dataset_name_, "row range out of the scene"};
    if (static_cast<std::int64_t>(out_bytes) != row_count * info_.bytes_per_row())
      return Error{ErrorKind::internal, path_, dataset_name_, "output buffer size does not match the rows"};
    return {};
  }

  std::string path_;
  std::string dataset_name_;
  CubeInfo info_;
  const mpi::Comm* parallel_;
  h5::File file_;
  h5::Dataset dataset_;
  h5::PropertyList transfer_;
  bool compressed_;
  std::optional<LocatedRows> located_;  // rows read with pread, without the library
};

Result<h5::Dataset> open_cube_dataset(hid_t file, const std::string& path) {
  const htri_t exists = H5Lexists(file, "cube", H5P_DEFAULT);
  if (exists <= 0) return bad_input(path, kCube, "dataset missing");
  h5::Dataset dataset(H5Dopen2(file, kCube, H5P_DEFAULT));
  if (!dataset) return bad_input(path, kCube, "is not a dataset: " + h5::hdf5_error_detail());
  return dataset;
}

}  // namespace

Result<h5::File> open_hdf5_file(const std::string& path, const mpi::Comm* parallel) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return io_error(path, "no such file");
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
  if (is_hdf5 < 0) return io_error(path, "cannot open: " + h5::hdf5_error_detail());
  if (is_hdf5 == 0) return bad_input(path, "signature", "not an HDF5 file");
  const auto fapl = h5::file_access(parallel, false);
  h5::File file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get()));
  if (!file)
    return bad_input(path, "superblock", "cannot open the HDF5 file (truncated or corrupt?): " +
                                             h5::hdf5_error_detail());
  return file;
}

Result<CubeShape> read_hdf5_shape(hid_t dataset, const std::string& path, const std::string& name) {
  h5::Dataspace space(H5Dget_space(dataset));
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank != 3)
    return bad_input(path, name, "expected rank 3 [lines, samples, bands], found rank " +
                                      std::to_string(rank));
  hsize_t dims[3] = {0, 0, 0};
  H5Sget_simple_extent_dims(space.get(), dims, nullptr);
  constexpr hsize_t kMaxDim = hsize_t{1} << 31;  // keeps lines * samples * bands * 8 in int64
  for (hsize_t dim : dims)
    if (dim == 0 || dim >= kMaxDim)
      return bad_input(path, name, "dimension " + std::to_string(dim) + " out of range");
  CubeShape shape{static_cast<std::int64_t>(dims[0]), static_cast<std::int64_t>(dims[1]),
                  static_cast<std::int64_t>(dims[2])};
  if (shape.samples * shape.bands > (std::int64_t{1} << 58) / shape.lines)
    return bad_input(path, name, "too many elements");
  return shape;
}

Result<DataType> read_hdf5_type(hid_t dataset, const std::string& path, const std::string& name) {
  h5::Datatype type(H5Dget_type(dataset));
  const auto data_type = h5::data_type_of(type.get());
  if (!data_type)
    return bad_input(path, name,
                     "unsupported element type (need uint8, int16, uint16, int32, uint32, "
                     "int64, uint64, float32 or float64)");
  return *data_type;
}

Result<std::unique_ptr<Cube>> open_hdf5_cube(const std::string& path, const mpi::Comm* comm) {
  h5::silence_hdf5_errors();
  const mpi::Comm* parallel = h5::parallel_comm(comm);
  auto file = open_hdf5_file(path, parallel);
  if (!file) return file.error();
  HB_TRY(h5::check_format_marker(file->get(), path));
  auto dataset = open_cube_dataset(file->get(), path);
  if (!dataset) return dataset.error();

  CubeInfo info;
  auto shape = read_hdf5_shape(dataset->get(), path, kCube);
  if (!shape) return shape.error();
  info.shape = *shape;
  auto type = read_hdf5_type(dataset->get(), path, kCube);
  if (!type) return type.error();
  info.type = *type;
  auto meta = h5::read_metadata(dataset->get(), path);
  if (!meta) return meta.error();
  info.meta = std::move(*meta);
  if (!info.meta.scaling.applies()) HB_TRY(read_envi_scaling(info.meta, info.shape.bands, path));

  return hdf5_dataset_cube(path, kCube, std::move(info), std::move(*file), std::move(*dataset), parallel);
}

std::unique_ptr<Cube> hdf5_dataset_cube(const std::string& path, const std::string& dataset_name, CubeInfo info,
                                        h5::File file, h5::Dataset dataset, const mpi::Comm* parallel) {
  return std::make_unique<Hdf5Cube>(path, dataset_name, std::move(info), std::move(file), std::move(dataset),
                                    parallel);
}

}  // namespace hb::io
