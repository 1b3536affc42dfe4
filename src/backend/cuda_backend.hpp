#pragma once

#include <memory>

#include "src/backend/backend.hpp"

namespace hb {
// Only defined in CUDA builds.
Result<std::unique_ptr<Backend>> make_cuda_backend(int device);
int cuda_visible_devices();
// Creates the primary context of `device` if it exists; errors are left for later calls.
void warm_up_cuda_context(int device);
}  // namespace hb
