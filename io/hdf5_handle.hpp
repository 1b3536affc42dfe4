// RAII for HDF5 identifiers and the one place that turns HDF5's error stack into text.
// HDF5 prints its error stack to stderr by default; silence_hdf5_errors() turns that
// off so that failures reach the user as one hb::Error line instead.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <string>
#include <utility>

namespace hb::io::h5 {

// A file whose H5Fclose failed (its metadata flush, on a full disk) stays in HDF5's
// tables, and HDF5 crashes closing it again when MPI ends. The CLI asks whether that
// happened and then exits without ending MPI (src/cli/main.cpp).
void note_failed_file_close();
bool a_file_close_failed();

// Owns one hid_t and closes it with Close (H5Fclose, H5Dclose, ...).
template <herr_t (*Close)(hid_t)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(hid_t id) : id_(id) {}
  ~Handle() { reset(); }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
    }
    return *this;
  }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  explicit operator bool() const { return valid(); }

  // Closes now; returns false when HDF5 reports a failure (e.g. a failed flush on H5Fclose).
  bool reset() {
    if (!valid()) return true;
    const herr_t status = Close(std::exchange(id_, H5I_INVALID_HID));
    if constexpr (Close == &H5Fclose) {
      if (status < 0) note_failed_file_close();
    }
    return status >= 0;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

using File = Handle<H5Fclose>;
using Dataset = Handle<H5Dclose>;
using Dataspace = Handle<H5Sclose>;
using Datatype = Handle<H5Tclose>;
using Attribute = Handle<H5Aclose>;
using PropertyList = Handle<H5Pclose>;

// Creation properties (H5P_FILE_CREATE, H5P_GROUP_CREATE, H5P_DATASET_CREATE) without
// modification times in object headers: the same inputs give the same bytes.
PropertyList untimed(hid_t property_class);

// Turns off HDF5's automatic printing of the error stack for this thread. Idempotent.
void silence_hdf5_errors();

// The most specific message on HDF5's current error stack ("truncated file: eof = ..."),
// or "unknown HDF5 error" when the stack is empty.
std::string hdf5_error_detail();

// hdf5_error_detail(), or "no space left on device" when the file system holding `path`
// has fewer than `bytes` free: MPI-IO reports a full disk only as a failed call.
std::string hdf5_error_detail(const std::string& path, std::size_t bytes);

}  // namespace hb::io::h5
