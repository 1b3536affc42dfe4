#pragma once

#include <memory>

#include "src/backend/backend.hpp"

namespace hb {
// Only defined in CUDA builds.
Result<std::unique_ptr<Backend>> make_cuda_backend(int device);
int cuda_visible_devices();
}  // namespace hb
