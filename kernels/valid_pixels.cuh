// The valid pixels of a raw BIP tile of a narrow type (u8, i16, u16), listed on the
// device: the rule of src/classify/features.cpp valid_pixels for those types, where a pixel
// is out when one of its used bands holds the ignore value (`target`), with no
// conversion. KNN's gathered queries take the list where it is made.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <optional>

#include "src/base/data_type.hpp"

namespace hb::kernels {

// Device scratch bytes list_valid_pixels needs for `pixels` pixels.
std::size_t valid_pixel_scratch_bytes(std::int64_t pixels);

// For `pixels` pixels of `tile` (`scene_bands` bands, `type` narrow): flag[p] = 1 unless
// one of the `dims` scene bands `band` of pixel p equals `target` (every pixel valid
// without one), then the valid pixels ascending in `out` and their count in `*count`.
// All device memory; `scratch` holds valid_pixel_scratch_bytes(pixels).
cudaError_t list_valid_pixels(DataType type, const void* tile, std::int64_t pixels, std::int64_t scene_bands,
                              const std::int64_t* band, int dims, std::optional<std::int64_t> target,
                              std::uint8_t* flag, void* scratch, std::size_t scratch_bytes, std::int64_t* out,
                              std::int64_t* count, cudaStream_t stream);

}  // namespace hb::kernels
