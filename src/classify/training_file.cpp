#include "src/classify/training_file.hpp"

#include <hdf5.h>

#include <fmt/core.h>

#include <array>
#include <utility>

#include "io/atomic_file.hpp"
#include "io/hdf5_handle.hpp"
#include "src/classify/hdf5_datasets.hpp"

namespace hb::classify {
namespace {

using namespace hdf5_datasets;  // NOLINT: Handle, QuietHdf5, read_all, ...

// Features stay in the file: rows are read by hyperslab when the search needs them.
class Hdf5TrainingSource final : public TrainingSource {
 public:
  Hdf5TrainingSource(std::string path, Handle file, Handle dataset, std::int64_t count, std::int64_t dims)
      : path_(std::move(path)), file_(std::move(file)), dataset_(std::move(dataset)), count_(count), dims_(dims) {}
  const std::string& name() const override { return path_; }
  std::int64_t count() const override { return count_; }
  std::int64_t dims() const override { return dims_; }
  Status read(std::int64_t first, std::int64_t rows, float* out) const override {
    QuietHdf5 quiet;
    Handle file_space(H5Dget_space(dataset_.get()), H5Sclose);
    const std::array<hsize_t, 2> start{static_cast<hsize_t>(first), 0};
    const std::array<hsize_t, 2> count{static_cast<hsize_t>(rows), static_cast<hsize_t>(dims_)};
    H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
    Handle memory_space(H5Screate_simple(2, count.data(), nullptr), H5Sclose);
    if (H5Dread(dataset_.get(), H5T_NATIVE_FLOAT, memory_space.get(), file_space.get(), H5P_DEFAULT, out) < 0)
      return io_error(path_, fmt::format("cannot read /train/features rows {} to {}", first, first + rows));
    return {};
  }

 private:
  std::string path_;
  Handle file_;
  Handle dataset_;
  std::int64_t count_;
  std::int64_t dims_;
};

}  // namespace

Result<TrainingSet> read_training_file(const std::string& path) {
  QuietHdf5 quiet;
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) return io_error(path, "cannot open as an HDF5 training file");
  auto features = open_dataset(file.get(), path, "/train/features");
  if (!features) return features.error();
  auto shape = extent(features->get(), path, "/train/features");
  if (!shape) return shape.error();
  if (shape->size() != 2 || (*shape)[0] == 0 || (*shape)[1] == 0)
    return bad_input(path, "/train/features", "must be a non-empty [rows, bands] array");
  Handle type(H5Dget_type(features->get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_FLOAT) return bad_input(path, "/train/features", "must hold float32 values");

  TrainingSet set;
  auto labels = read_all<std::int64_t>(file.get(), path, "/train/labels", H5T_NATIVE_INT64, H5T_INTEGER);
  if (!labels) return labels.error();
  if (labels->size() != (*shape)[0])
    return bad_input(path, "/train/labels", fmt::format("{} labels for {} feature rows", labels->size(), (*shape)[0]));
  for (std::size_t i = 0; i < labels->size(); ++i) {
    const auto label = (*labels)[i];
    if (label < 1 || label > 65535)
      return bad_input(path, "/train/labels", fmt::format("row {} has label {}: labels must be 1..65535", i, label));
    set.labels.push_back(static_cast<std::uint16_t>(label));
  }
  if (exists(file.get(), "/train/class_names")) {
    auto names = read_strings(file.get(), path, "/train/class_names");
    if (!names) return names.error();
    set.classes.names = std::move(*names);
  }
  if (exists(file.get(), "/train/class_lookup")) {
    auto lookup = read_all<int>(file.get(), path, "/train/class_lookup", H5T_NATIVE_INT, H5T_INTEGER);
    if (!lookup) return lookup.error();
    set.classes.lookup = std::move(*lookup);
  }
  if (exists(file.get(), "/train/wavelength")) {
    auto wavelength = read_all<double>(file.get(), path, "/train/wavelength", H5T_NATIVE_DOUBLE, H5T_FLOAT);
    if (!wavelength) return wavelength.error();
    if (wavelength->size() != (*shape)[1])
      return bad_input(path, "/train/wavelength",
                       fmt::format("{} wavelengths for {} feature columns", wavelength->size(), (*shape)[1]));
    set.wavelength = std::move(*wavelength);
  }
  set.features = std::make_unique<Hdf5TrainingSource>(path, std::move(file), std::move(*features),
                                                      static_cast<std::int64_t>((*shape)[0]),
                                                      static_cast<std::int64_t>((*shape)[1]));
  return set;
}

Status write_training_file(const std::string& path, const TrainingFileContents& c) {
  QuietHdf5 quiet;
  io::AtomicPath out(path);
  {
    Handle file(H5Fcreate(out.temporary().c_str(), H5F_ACC_TRUNC, io::h5::untimed(H5P_FILE_CREATE).get(), H5P_DEFAULT),
                H5Fclose);
    if (!file.ok()) return io_error(path, "cannot create the HDF5 training file");
    Handle group(H5Gcreate2(file.get(), "train", H5P_DEFAULT, io::h5::untimed(H5P_GROUP_CREATE).get(), H5P_DEFAULT),
                 H5Gclose);
    const hsize_t n = c.labels.size();
    const std::array<hsize_t, 2> feature_dims{n, static_cast<hsize_t>(c.dims)};
    const std::array<hsize_t, 1> row_dims{n};
    HB_TRY(write_dataset(group.get(), path, "features", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, feature_dims,
                         c.features.data()));
    HB_TRY(write_dataset(group.get(), path, "labels", H5T_STD_U16LE, H5T_NATIVE_UINT16, row_dims, c.labels.data()));
    if (!c.pixels.empty())
      HB_TRY(write_dataset(group.get(), path, "pixels", H5T_STD_I64LE, H5T_NATIVE_INT64, row_dims, c.pixels.data()));
    if (!c.wavelength.empty()) {
      const std::array<hsize_t, 1> dims{c.wavelength.size()};
      HB_TRY(write_dataset(group.get(), path, "wavelength", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, dims,
                           c.wavelength.data()));
    }
    if (c.classes && !c.classes->names.empty()) HB_TRY(write_strings(group.get(), path, "class_names", c.classes->names));
    if (c.classes && !c.classes->lookup.empty() && c.classes->lookup.size() % 3 == 0) {
      const std::array<hsize_t, 2> dims{c.classes->lookup.size() / 3, 3};
      HB_TRY(write_dataset(group.get(), path, "class_lookup", H5T_STD_I32LE, H5T_NATIVE_INT, dims,
                           c.classes->lookup.data()));
    }
  }
  return out.commit();
}

}  // namespace hb::classify
