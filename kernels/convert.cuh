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

// Stored samples in physical units (io/units.hpp): out[i] = physical_sample(in[i],
// gain[b], offset[b]) with b = i % bands, NaN where the stored sample is non-finite or,
// with has_ignore, equals `ignore` (the host's physical view, bit for bit). gain and
// offset: `bands` doubles on the device.
cudaError_t physical_to_f32(DataType type, const void* in, std::int64_t bands, const double* gain,
                            const double* offset, bool has_ignore, double ignore, float* out, std::size_t n,
                            cudaStream_t stream);

// KNN queries gathered from a raw BIP tile of `type` with `scene_bands` bands (device):
// out[q, f] = float(double(x) - shift[f]) with x = float(v), or physical_sample(v,
// gain[f], offset[f]) when gain is given, and v = tile[pixel[q], band[f]]: the host's
// bits (src/classify/features.cpp gather_queries); pixel: `rows` tile-local pixels,
// band: `dims` scene bands, shift: dims doubles or null for x itself, gain and offset:
// dims doubles (the feature's band) or null; all on the device.
struct QueryScaling {
  const double* shift = nullptr;
  const double* gain = nullptr;
  const double* offset = nullptr;
};
cudaError_t gather_queries(DataType type, const void* tile, std::int64_t scene_bands, const std::int64_t* pixel,
                           std::int64_t rows, const std::int64_t* band, int dims, QueryScaling scaling, float* out,
                           cudaStream_t stream);

}  // namespace hb::kernels
