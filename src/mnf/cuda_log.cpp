// Logging for the CUDA half of the tile operations, compiled by the host compiler (spdlog's compile-time
// format strings do not build under nvcc).
#include <spdlog/spdlog.h>

#include "src/mnf/cuda_tile_ops.hpp"

namespace hb::cuda {

void log_host_waits(const HostWaits& waits, const std::array<double, kStatsSteps>& gpu) {
  spdlog::debug("cuda mnf: the host waited {:.3f} s for tile uploads and {:.3f} s for moments; staged {:.2f} GB "
                "into pinned memory in {:.3f} s",
                waits.copy_seconds, waits.moments_seconds, waits.staged_bytes / 1e9, waits.staging_seconds);
  if (gpu[kTileCopy] + gpu[kMask] + gpu[kConvert] + gpu[kNoise] + gpu[kCross] > 0)
    spdlog::debug("cuda mnf statistics, GPU time by step: tile copies and units {:.3f} s, exclusion masks {:.3f} s, "
                  "conversion {:.3f} s, noise residuals {:.3f} s, cross products {:.3f} s",
                  gpu[kTileCopy], gpu[kMask], gpu[kConvert], gpu[kNoise], gpu[kCross]);
}

bool debug_logging() { return spdlog::should_log(spdlog::level::debug); }

}  // namespace hb::cuda
