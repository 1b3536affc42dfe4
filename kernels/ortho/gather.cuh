// Device side of the orthorectification gather (src/ortho/gather.hpp): every grid pixel
// copies its source pixel (or the fill pixel) as bytes, in 4-byte words when the pixel
// size allows.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace hb::kernels::ortho {

struct GatherArgs {
  const std::byte* source;      // device: source rows, canonical layout
  std::int64_t source_first_line;
  std::int64_t source_samples;
  const std::int32_t* sample;   // device: per grid pixel, 0-based, -1 = none
  const std::int32_t* line;
  const std::byte* fill;        // device: one pixel
  std::byte* out;               // device: pixels * pixel_bytes
  std::int64_t pixels;
  std::int64_t pixel_bytes;
};

cudaError_t launch_gather(const GatherArgs& args, cudaStream_t stream);

}  // namespace hb::kernels::ortho
