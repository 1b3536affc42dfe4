// Raw scene samples to float32 on the device: integers cross the host-device link
// as they are stored (half the bytes of float32 for int16) and are widened here.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "io/data_type.hpp"

namespace hb::kernels {

// out[i] = float(in[i]) for n samples of `type` in device memory, on `stream`.
cudaError_t convert_to_f32(io::DataType type, const void* in, float* out, std::size_t n,
                           cudaStream_t stream);

}  // namespace hb::kernels
