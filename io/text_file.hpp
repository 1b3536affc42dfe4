// Text files (reports, manifests, scripts) that appear complete or not at all: written
// under a temporary name, then renamed (io::AtomicPath).
#pragma once

#include <string>

#include "src/base/error.hpp"

namespace hb::io {

Status write_text_file(const std::string& path, const std::string& text);

}  // namespace hb::io
