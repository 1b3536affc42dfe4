// Small readers and writers of whole HDF5 datasets with errors that name the file and dataset.
// Shared by the formats that are not cubes: training files (training_file.hpp) and SAM
// spectral libraries (src/sam/library).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "src/base/error.hpp"

namespace hb::classify::hdf5_datasets {

// Owns one HDF5 identifier.
class Handle {
 public:
  Handle() = default;
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Handle(Handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), close_(o.close_) {}
  Handle& operator=(Handle&& o) noexcept {
    std::swap(id_, o.id_);
    std::swap(close_, o.close_);
    return *this;
  }
  ~Handle() {
    if (id_ >= 0 && close_) close_(id_);
  }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_ = H5I_INVALID_HID;
  herr_t (*close_)(hid_t) = nullptr;
};

// HDF5 prints its error stack by default; our errors are values, so keep it quiet.
struct QuietHdf5 {
  H5E_auto2_t func = nullptr;
  void* data = nullptr;
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &func, &data);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func, data); }
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;
};

inline bool exists(hid_t file, const char* path) { return H5Lexists(file, path, H5P_DEFAULT) > 0; }

// The dataset's extent, or an error naming it.
inline Result<std::vector<hsize_t>> extent(hid_t dataset, const std::string& file, const std::string& name) {
  Handle space(H5Dget_space(dataset), H5Sclose);
  const int rank = space.ok() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank < 0) return bad_input(file, name, "cannot read the dataset's shape");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  return dims;
}

inline Result<Handle> open_dataset(hid_t file, const std::string& path, const std::string& name) {
  Handle d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!d.ok()) return bad_input(path, name, "missing or unreadable dataset");
  return d;
}

template <class T>
Result<std::vector<T>> read_all(hid_t file, const std::string& path, const std::string& name, hid_t memory_type,
                                H5T_class_t expected_class) {
  auto d = open_dataset(file, path, name);
  if (!d) return d.error();
  Handle type(H5Dget_type(d->get()), H5Tclose);
  if (H5Tget_class(type.get()) != expected_class)
    return bad_input(path, name, expected_class == H5T_INTEGER ? "must hold integers" : "must hold floating-point numbers");
  auto dims = extent(d->get(), path, name);
  if (!dims) return dims.error();
  hsize_t n = 1;
  for (const auto x : *dims) n *= x;
  std::vector<T> values(n);
  if (n > 0 && H5Dread(d->get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    return bad_input(path, name, "cannot read the dataset");
  return values;
}

// A 1-D dataset of strings (variable or fixed length).
Result<std::vector<std::string>> read_strings(hid_t file, const std::string& path, const std::string& name);

// Creates `name` under `group` with the given extent and writes all of `data`.
Status write_dataset(hid_t group, const std::string& path, const char* name, hid_t file_type, hid_t memory_type,
                     std::span<const hsize_t> dims, const void* data);
// A 1-D dataset of variable-length UTF-8 strings.
Status write_strings(hid_t group, const std::string& path, const char* name, const std::vector<std::string>& names);

}  // namespace hb::classify::hdf5_datasets
