// Logging for the CUDA half of the tile operations, compiled by the host compiler (spdlog's compile-time
// format strings do not build under nvcc).
#include <spdlog/spdlog.h>

#include "src/mnf/cuda_tile_ops.hpp"

namespace hb::cuda {

void log_staging(double bytes, double seconds) {
  spdlog::debug("cuda mnf: staged {:.2f} GB into pinned memory in {:.3f} s", bytes / 1e9, seconds);
}

}  // namespace hb::cuda
