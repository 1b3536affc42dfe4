#include "io/hdf5_handle.hpp"

#include <sys/statvfs.h>

#include <atomic>
#include <cctype>

namespace hb::io::h5 {
namespace {

// Keeps the first (innermost, walking upward) non-empty description.
herr_t keep_innermost(unsigned, const H5E_error2_t* entry, void* data) {
  auto* out = static_cast<std::string*>(data);
  if (out->empty() && entry != nullptr && entry->desc != nullptr && entry->desc[0] != '\0')
    *out = entry->desc;
  return 0;
}

// A failed system call's description ("file write failed: time = ..., errno = 28, error
// message = 'No space left on device', ...") says only its cause: the rest names the
// temporary file and offsets, which mean nothing to the reader of the one error line.
std::string operating_system_cause(const std::string& detail) {
  const std::string mark = "error message = '";
  const auto begin = detail.find(mark);
  if (begin == std::string::npos) return detail;
  const auto end = detail.find('\'', begin + mark.size());
  if (end == std::string::npos) return detail;
  std::string cause = detail.substr(begin + mark.size(), end - begin - mark.size());
  if (!cause.empty()) cause[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(cause[0])));
  return cause;
}

}  // namespace

namespace {
std::atomic<bool> file_close_failed{false};
}  // namespace

void note_failed_file_close() { file_close_failed = true; }
bool a_file_close_failed() { return file_close_failed; }

PropertyList untimed(hid_t property_class) {
  PropertyList properties(H5Pcreate(property_class));
  H5Pset_obj_track_times(properties.get(), false);
  return properties;
}

void silence_hdf5_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

std::string hdf5_error_detail() {
  std::string detail;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &detail);
  H5Eclear2(H5E_DEFAULT);
  return detail.empty() ? "unknown HDF5 error" : operating_system_cause(detail);
}

std::string hdf5_error_detail(const std::string& path, std::size_t bytes) {
  std::string detail = hdf5_error_detail();
  struct statvfs fs {};
  if (detail.find("no space") == std::string::npos && ::statvfs(path.c_str(), &fs) == 0 &&
      static_cast<std::size_t>(fs.f_bavail) * fs.f_frsize < bytes)
    detail = "no space left on device";
  return detail;
}

}  // namespace hb::io::h5
