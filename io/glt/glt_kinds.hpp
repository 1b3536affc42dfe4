// The two GLT readers behind open_glt (io/glt/glt.hpp).
#pragma once

#include "io/glt/glt.hpp"

namespace hb::io {
Result<std::unique_ptr<Glt>> open_envi_glt(const std::string& path);
Result<std::unique_ptr<Glt>> open_emit_glt(const std::string& path);
}  // namespace hb::io
