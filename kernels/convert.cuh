// Raw scene samples to float32 on the device: integers cross the host-device link
// as they are stored (half the bytes of float32 for int16) and are widened here.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "io/data_type.hpp"

namespace hb::kernels {

// out[i] = float(in[i]) for n samples of `type` in device memory, on `stream`.
cudaError_t convert_to_f32(io::DataType type, const void* in, float* out, std::size_t n,
                           cudaStream_t stream);

// KNN queries from packed rows [rows, dims] of `type` (device): out[r, f] =
// float(double(float(in[r, f])) - shift[f]), the host's bits (src/knn/features.cpp);
// shift: dims doubles on the device, or null for float(in[r, f]).
cudaError_t widen_and_shift(io::DataType type, const void* in, std::int64_t rows, int dims, const double* shift,
                            float* out, cudaStream_t stream);

}  // namespace hb::kernels
