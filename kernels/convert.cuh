// Raw scene samples to float32 on the device: integers cross the host-device link
// as they are stored (half the bytes of float32 for int16) and are widened here.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "src/base/data_type.hpp"

namespace hb::kernels {

// out[i] = float(in[i]) for n samples of `type` in device memory, on `stream`.
cudaError_t convert_to_f32(DataType type, const void* in, float* out, std::size_t n,
                           cudaStream_t stream);

// KNN queries gathered from a raw BIP tile of `type` with `scene_bands` bands (device):
// out[q, f] = float(double(float(v)) - shift[f]) with v = tile[pixel[q], band[f]], the
// host's bits (src/classify/features.cpp gather_queries); pixel: `rows` tile-local pixels,
// band: `dims` scene bands, shift: dims doubles or null for float(v); all on the device.
cudaError_t gather_queries(DataType type, const void* tile, std::int64_t scene_bands, const std::int64_t* pixel,
                           std::int64_t rows, const std::int64_t* band, int dims, const double* shift, float* out,
                           cudaStream_t stream);

}  // namespace hb::kernels
