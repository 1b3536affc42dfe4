// Logging for the CUDA backend, compiled by the host compiler (spdlog's compile-time
// format strings do not build under nvcc).
#include <spdlog/spdlog.h>

#include "src/backend/cuda_mnf.hpp"

namespace hb::cuda {

void log_staging(double bytes, double seconds) {
  spdlog::debug("cuda mnf: staged {:.2f} GB into pinned memory in {:.3f} s", bytes / 1e9, seconds);
}

}  // namespace hb::cuda
