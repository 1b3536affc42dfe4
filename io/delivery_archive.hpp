// Delivery archives (.tar.gz, .tgz, .tar: one flightline each, as agencies ship them),
// read with libarchive. The scene inside is the largest member with an ENVI header
// beside it (NAME.hdr or NAME.EXT's STEM.hdr); it travels with the header and the
// flightline's calibration files (.gain, .spc). Only those are unpacked, by base name
// into a folder of their own: members never land outside it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/base/error.hpp"

namespace hb::io {

bool is_delivery_archive(const std::string& path);

struct DeliveryContents {
  std::string image;                    // member names, as stored
  std::string header;
  std::vector<std::string> calibration;
  std::int64_t image_bytes = 0;
};

// Reads the whole archive (a truncated or corrupt one fails here, as bad input naming
// the archive and the member or stage at fault) and picks its scene.
Result<DeliveryContents> inspect_delivery(const std::string& archive);

// Unpacks the scene's members into `folder` (created); returns the header's path there.
Result<std::string> unpack_delivery(const std::string& archive, const DeliveryContents& contents,
                                    const std::string& folder);

}  // namespace hb::io
