#include "src/mnf/stats_file.hpp"

#include <hdf5.h>

#include <utility>

#include "io/atomic_file.hpp"
#include "io/hdf5_handle.hpp"

namespace hb::mnf {
namespace {

// Closes an HDF5 identifier on scope exit.
class Handle {
 public:
  Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Handle() {
    if (id_ >= 0) close_(id_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }
  hid_t release() { return std::exchange(id_, -1); }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

class Writer {
 public:
  Writer(std::string path, hid_t group) : path_(std::move(path)), group_(group) {}

  Status doubles(const char* name, const std::vector<double>& v, hsize_t rows, hsize_t cols = 0) {
    return dataset(name, H5T_NATIVE_DOUBLE, v.data(), rows, cols);
  }
  Status matrix(const char* name, const linalg::Matrix& m) {
    return doubles(name, m.data, static_cast<hsize_t>(m.rows), static_cast<hsize_t>(m.cols));
  }
  Status integers(const char* name, const std::vector<std::int64_t>& v) {
    return dataset(name, H5T_NATIVE_INT64, v.data(), v.size(), 0);
  }
  Status integer_attribute(const char* name, std::int64_t value) {
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    Handle attr(H5Acreate2(group_, name, H5T_NATIVE_INT64, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    if (!attr.ok() || H5Awrite(attr.get(), H5T_NATIVE_INT64, &value) < 0) return failed(name);
    return {};
  }
  Status string_attribute(const char* name, const std::string& value) {
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type.get(), value.size() + 1);
    H5Tset_strpad(type.get(), H5T_STR_NULLTERM);
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    Handle attr(H5Acreate2(group_, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    if (!attr.ok() || H5Awrite(attr.get(), type.get(), value.c_str()) < 0) return failed(name);
    return {};
  }

 private:
  Status dataset(const char* name, hid_t type, const void* data, hsize_t rows, hsize_t cols) {
    const hsize_t dims[2] = {rows, cols};
    Handle space(H5Screate_simple(cols == 0 ? 1 : 2, dims, nullptr), H5Sclose);
    Handle set(H5Dcreate2(group_, name, type, space.get(), H5P_DEFAULT, io::h5::untimed(H5P_DATASET_CREATE).get(), H5P_DEFAULT),
               H5Dclose);
    if (!set.ok()) return failed(name);
    if (rows * std::max<hsize_t>(cols, 1) > 0 && H5Dwrite(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
      return failed(name);
    return {};
  }
  Status failed(const char* name) const { return io_error(path_, std::string("cannot write ") + name); }

  std::string path_;
  hid_t group_;
};

Status write_group(const std::string& path, hid_t file, const StatsRecord& r) {
  const std::string group_name = "/" + std::string(method_name(r.method));
  Handle group(H5Gcreate2(file, group_name.c_str(), H5P_DEFAULT, io::h5::untimed(H5P_GROUP_CREATE).get(), H5P_DEFAULT),
               H5Gclose);
  if (!group.ok()) return io_error(path, "cannot create group " + group_name);
  Writer w(path, group.get());
  HB_TRY(w.doubles("eigenvalues", r.eigenvalues, r.eigenvalues.size()));
  HB_TRY(w.matrix("transform", r.transform));
  HB_TRY(w.doubles("mean", r.mean, r.mean.size()));
  HB_TRY(w.matrix("data_covariance", r.data_covariance));
  if (r.method == Method::mnf) HB_TRY(w.matrix("noise_covariance", r.noise_covariance));
  HB_TRY(w.integers("bands", r.bands));
  HB_TRY(w.integers("excluded_bands", r.excluded_bands));
  HB_TRY(w.string_attribute("method", std::string(method_name(r.method))));
  if (r.method == Method::mnf) HB_TRY(w.string_attribute("noise_estimator", std::string(noise_estimator_name(r.estimator))));
  HB_TRY(w.integer_attribute("scene_bands", r.scene_bands));
  HB_TRY(w.integer_attribute("data_pixels", r.data_pixels));
  HB_TRY(w.integer_attribute("noise_pixels", r.noise_pixels));
  HB_TRY(w.integer_attribute("excluded_pixels", r.excluded_pixels));
  HB_TRY(w.string_attribute("backend", r.backend));
  HB_TRY(w.string_attribute("source_file", r.source_file));
  return {};
}

class Reader {
 public:
  Reader(std::string path, hid_t group, std::string group_name)
      : path_(std::move(path)), group_(group), group_name_(std::move(group_name)) {}

  Result<std::vector<double>> doubles(const char* name, std::vector<hsize_t>* dims = nullptr) {
    return read<double>(name, H5T_NATIVE_DOUBLE, dims);
  }
  Result<linalg::Matrix> matrix(const char* name) {
    std::vector<hsize_t> dims;
    auto v = doubles(name, &dims);
    if (!v) return v.error();
    if (dims.size() != 2) return bad(name, "expected a 2-D dataset");
    linalg::Matrix m(static_cast<std::int64_t>(dims[0]), static_cast<std::int64_t>(dims[1]));
    m.data = std::move(*v);
    return m;
  }
  Result<std::vector<std::int64_t>> integers(const char* name) { return read<std::int64_t>(name, H5T_NATIVE_INT64, nullptr); }
  Result<std::int64_t> integer_attribute(const char* name) {
    std::int64_t value = 0;
    Handle attr(open_attribute(name), H5Aclose);
    if (!attr.ok() || H5Aread(attr.get(), H5T_NATIVE_INT64, &value) < 0) return bad(name, "missing or not an integer");
    return value;
  }
  Result<std::string> string_attribute(const char* name) {
    Handle attr(open_attribute(name), H5Aclose);
    if (!attr.ok()) return bad(name, "missing");
    Handle type(H5Aget_type(attr.get()), H5Tclose);
    if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) > 0)
      return bad(name, "not a fixed-length string");
    std::string value(H5Tget_size(type.get()), '\0');
    if (H5Aread(attr.get(), type.get(), value.data()) < 0) return bad(name, "unreadable");
    value.resize(value.find('\0') == std::string::npos ? value.size() : value.find('\0'));
    return value;
  }
  Error bad(const char* name, const std::string& message) const {
    return bad_input(path_, group_name_ + "/" + name, message);
  }

 private:
  hid_t open_attribute(const char* name) {
    hid_t id = -1;
    H5E_BEGIN_TRY { id = H5Aopen(group_, name, H5P_DEFAULT); }
    H5E_END_TRY;
    return id;
  }
  template <class T>
  Result<std::vector<T>> read(const char* name, hid_t type, std::vector<hsize_t>* dims_out) {
    hid_t id = -1;
    H5E_BEGIN_TRY { id = H5Dopen2(group_, name, H5P_DEFAULT); }
    H5E_END_TRY;
    Handle set(id, H5Dclose);
    if (!set.ok()) return bad(name, "missing dataset");
    Handle space(H5Dget_space(set.get()), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 1 || rank > 2) return bad(name, "expected a 1-D or 2-D dataset");
    std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
    H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
    hsize_t n = 1;
    for (auto d : dims) n *= d;
    std::vector<T> v(n);
    if (n > 0 && H5Dread(set.get(), type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0) return bad(name, "unreadable");
    if (dims_out) *dims_out = dims;
    return v;
  }

  std::string path_;
  hid_t group_;
  std::string group_name_;
};

template <class T>
Status take(Result<T> result, T& into) {
  if (!result) return result.error();
  into = std::move(*result);
  return {};
}

Result<StatsRecord> read_group(const std::string& path, hid_t group, Method method) {
  StatsRecord r;
  r.method = method;
  Reader in(path, group, "/" + std::string(method_name(method)));
  HB_TRY(take(in.doubles("eigenvalues"), r.eigenvalues));
  HB_TRY(take(in.matrix("transform"), r.transform));
  HB_TRY(take(in.doubles("mean"), r.mean));
  HB_TRY(take(in.matrix("data_covariance"), r.data_covariance));
  HB_TRY(take(in.integers("bands"), r.bands));
  HB_TRY(take(in.integers("excluded_bands"), r.excluded_bands));
  if (method == Method::mnf) {
    HB_TRY(take(in.matrix("noise_covariance"), r.noise_covariance));
    std::string name;
    HB_TRY(take(in.string_attribute("noise_estimator"), name));
    auto estimator = noise_estimator_from_name(name);
    if (!estimator) return in.bad("noise_estimator", "unknown estimator '" + name + "'");
    r.estimator = *estimator;
  }
  HB_TRY(take(in.integer_attribute("scene_bands"), r.scene_bands));
  HB_TRY(take(in.integer_attribute("data_pixels"), r.data_pixels));
  HB_TRY(take(in.integer_attribute("noise_pixels"), r.noise_pixels));
  HB_TRY(take(in.integer_attribute("excluded_pixels"), r.excluded_pixels));
  HB_TRY(take(in.string_attribute("backend"), r.backend));
  HB_TRY(take(in.string_attribute("source_file"), r.source_file));
  const auto n = static_cast<std::int64_t>(r.bands.size());
  if (static_cast<std::int64_t>(r.mean.size()) != n || r.data_covariance.rows != n || r.data_covariance.cols != n ||
      (method == Method::mnf && (r.noise_covariance.rows != n || r.noise_covariance.cols != n)))
    return in.bad("bands", "sizes of bands, mean and covariances disagree");
  for (auto b : r.bands)
    if (b < 0 || b >= r.scene_bands) return in.bad("bands", "band index out of the scene");
  return r;
}

}  // namespace

Status write_stats_file(const std::string& path, const StatsRecord& record) {
  io::AtomicPath target(path);
  {
    Handle file(H5Fcreate(target.temporary().c_str(), H5F_ACC_TRUNC, io::h5::untimed(H5P_FILE_CREATE).get(), H5P_DEFAULT),
                H5Fclose);
    if (!file.ok()) return io_error(path, "cannot create the statistics file");
    HB_TRY(write_group(path, file.get(), record));
  }
  return target.commit();
}

Status add_stats_group(const std::string& file_path, const std::string& output, const StatsRecord& record) {
  Handle file(H5Fopen(file_path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT), H5Fclose);
  if (!file.ok()) return io_error(output, "cannot reopen to add the statistics: " + io::h5::hdf5_error_detail());
  HB_TRY(write_group(output, file.get(), record));
  if (H5Lexists(file.get(), "/cube", H5P_DEFAULT) > 0 && H5Lexists(file.get(), "/components", H5P_DEFAULT) == 0 &&
      H5Lcreate_soft("/cube", file.get(), "/components", H5P_DEFAULT, H5P_DEFAULT) < 0)
    return io_error(output, "cannot link /components");
  if (H5Fclose(file.release()) < 0) {
    io::h5::note_failed_file_close();
    return io_error(output, "cannot add the statistics: " + io::h5::hdf5_error_detail());
  }
  return {};
}

Result<StatsRecord> read_stats_file(const std::string& path) {
  hid_t id = -1;
  H5E_BEGIN_TRY { id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT); }
  H5E_END_TRY;
  Handle file(id, H5Fclose);
  if (!file.ok()) return io_error(path, "cannot open as HDF5");
  for (Method method : {Method::mnf, Method::pca}) {
    const std::string name = "/" + std::string(method_name(method));
    if (H5Lexists(file.get(), name.c_str(), H5P_DEFAULT) <= 0) continue;
    Handle group(H5Gopen2(file.get(), name.c_str(), H5P_DEFAULT), H5Gclose);
    if (!group.ok()) return bad_input(path, name, "cannot open group");
    return read_group(path, group.get(), method);
  }
  return bad_input(path, "/mnf", "no /mnf or /pca statistics group");
}

}  // namespace hb::mnf
