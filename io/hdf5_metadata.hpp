// io::Metadata <-> attributes of /cube, and the file-level format marker on "/".
// Attribute names and types are listed in docs/formats.md. Fields at their default
// value are not written and absent attributes read back as the default, so every
// Metadata round-trips exactly.
#pragma once

#include <hdf5.h>

#include <string>

#include "src/base/error.hpp"
#include "io/metadata.hpp"

namespace hb::io::h5 {

inline constexpr const char* kFormatName = "hyperbatch-cube";
inline constexpr int kFormatVersion = 1;

Status write_metadata(hid_t cube, const Metadata& meta, const std::string& file);
Result<Metadata> read_metadata(hid_t cube, const std::string& file);

// format = "hyperbatch-cube", format_version = 1 on the root group.
Status write_format_marker(hid_t root, const std::string& file);
// Absent markers are accepted (a plain /cube written by h5py is readable); present
// ones must name this format and a version we know.
Status check_format_marker(hid_t root, const std::string& file);

}  // namespace hb::io::h5
