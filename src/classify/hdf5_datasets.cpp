#include "src/classify/hdf5_datasets.hpp"

#include "io/hdf5_handle.hpp"

#include <array>

namespace hb::classify::hdf5_datasets {

Result<std::vector<std::string>> read_strings(hid_t file, const std::string& path, const std::string& name) {
  auto d = open_dataset(file, path, name);
  if (!d) return d.error();
  Handle type(H5Dget_type(d->get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING) return bad_input(path, name, "must hold strings");
  auto dims = extent(d->get(), path, name);
  if (!dims) return dims.error();
  const std::size_t n = dims->empty() ? 1 : (*dims)[0];
  std::vector<std::string> out;
  if (H5Tis_variable_str(type.get()) > 0) {
    Handle memory(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(memory.get(), H5T_VARIABLE);
    H5Tset_cset(memory.get(), H5Tget_cset(type.get()));
    std::vector<char*> pointers(n, nullptr);
    if (H5Dread(d->get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()) < 0)
      return bad_input(path, name, "cannot read the strings");
    for (auto* p : pointers) out.emplace_back(p ? p : "");
    Handle space(H5Dget_space(d->get()), H5Sclose);
    H5Dvlen_reclaim(memory.get(), space.get(), H5P_DEFAULT, pointers.data());
  } else {
    const std::size_t width = H5Tget_size(type.get());
    std::vector<char> buffer(n * width);
    if (H5Dread(d->get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()) < 0)
      return bad_input(path, name, "cannot read the strings");
    for (std::size_t i = 0; i < n; ++i) {
      std::string s(buffer.data() + i * width, width);
      s.erase(s.find_last_not_of(std::string(" \0", 2)) + 1);
      out.push_back(s);
    }
  }
  return out;
}

Status write_dataset(hid_t group, const std::string& path, const char* name, hid_t file_type, hid_t memory_type,
                     std::span<const hsize_t> dims, const void* data) {
  Handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  Handle d(H5Dcreate2(group, name, file_type, space.get(), H5P_DEFAULT, io::h5::untimed(H5P_DATASET_CREATE).get(),
                      H5P_DEFAULT),
           H5Dclose);
  if (!d.ok() || H5Dwrite(d.get(), memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    return io_error(path, std::string("cannot write dataset ") + name);
  return {};
}

Status write_strings(hid_t group, const std::string& path, const char* name, const std::vector<std::string>& names) {
  Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  std::vector<const char*> pointers;
  for (const auto& n : names) pointers.push_back(n.c_str());
  const std::array<hsize_t, 1> dims{names.size()};
  return write_dataset(group, path, name, type.get(), type.get(), dims, pointers.data());
}

}  // namespace hb::classify::hdf5_datasets
