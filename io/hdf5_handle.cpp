#include "io/hdf5_handle.hpp"

namespace hb::io::h5 {
namespace {

// Keeps the first (innermost, walking upward) non-empty description.
herr_t keep_innermost(unsigned, const H5E_error2_t* entry, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (out->empty() && entry != nullptr && entry->desc != nullptr && entry->desc[0] != '\0')
    *out = entry->desc;
  return 0;
}

}  // namespace

void silence_hdf5_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

std::string hdf5_error_detail() {
  std::string detail;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &detail);
  H5Eclear2(H5E_DEFAULT);
  return detail.empty() ? "unknown HDF5 error" : detail;
}

}  // namespace hb::io::h5
