#pragma once

#include <memory>

#include "src/ortho/gather.hpp"

namespace hb::ortho {
// Only defined in CUDA builds (src/ortho/cuda_gather.cu).
Result<std::unique_ptr<Gatherer>> make_cuda_gatherer(int device);
}  // namespace hb::ortho
