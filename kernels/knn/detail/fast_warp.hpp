// The warp path of select_fused (kernels/knn/fast_warp.cu), dispatched to by fast.cu
// for small k: a sorted list per query row in one warp's registers.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/knn/knn.cuh"

namespace hb::kernels::knn::detail {

// select_fused for k <= fused_warp_max_k(): lists stay sorted, so no SlabPlace.
cudaError_t select_fused_warp(const DistanceInputs& in, const float* slab, int rows, int cols, int ld, int col0,
                              std::int64_t first_index, Lists running, cudaStream_t stream);

}  // namespace hb::kernels::knn::detail
