// The valid pixels of a raw BIP tile, listed on the device with the rule of
// src/classify/features.cpp valid_pixels: for a narrow type (u8, i16, u16) a pixel is
// out when one of its used bands holds the ignore value (`target`), with no
// conversion; for f32 when one of them equals the ignore value or is not finite. KNN's
// gathered queries take the list where it is made.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>

#include "src/base/data_type.hpp"

namespace hb::kernels {

// What rules a pixel out, made on the host from the scene's ignore value
// (classify::narrow_ignore_target, classify::float_ignore_value).
struct UnusableSample {
  std::optional<std::int64_t> target;  // narrow types: the ignore value; none: every pixel valid
  float ignored = std::numeric_limits<float>::quiet_NaN();  // f32: the ignore value (NaN: none)
};

// Device scratch bytes list_valid_pixels needs for `pixels` pixels.
std::size_t valid_pixel_scratch_bytes(std::int64_t pixels);

// For `pixels` pixels of `tile` (`scene_bands` bands, `type` narrow or f32): flag[p] = 1
// unless one of the `dims` scene bands `band` of pixel p is unusable, then the valid
// pixels ascending in `out` and their count in `*count`. All device memory; `scratch`
// holds valid_pixel_scratch_bytes(pixels). cudaErrorInvalidValue for another type.
cudaError_t list_valid_pixels(DataType type, const void* tile, std::int64_t pixels, std::int64_t scene_bands,
                              const std::int64_t* band, int dims, const UnusableSample& unusable, std::uint8_t* flag,
                              void* scratch, std::size_t scratch_bytes, std::int64_t* out, std::int64_t* count,
                              cudaStream_t stream);

}  // namespace hb::kernels
