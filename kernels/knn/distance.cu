// Norms and the finishing of inner-product tiles into ranking distances.
#include <algorithm>
#include <cmath>

#include "kernels/knn/detail/pair.cuh"

namespace hb::kernels::knn {
namespace {

// One thread per row, bands summed in order: the CPU's rounding exactly.
__global__ void row_norms_kernel(Metric metric, const float* rows, int count, int dims, float* norms) {
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= count) return;
  const float* x = rows + r * dims;
  double sum = 0.0;
  for (int b = 0; b < dims; ++b) {
    const double v = static_cast<double>(x[b]);
    sum = __dadd_rn(sum, __dmul_rn(v, v));
  }
  norms[r] = static_cast<float>(metric == Metric::euclidean ? sum : sqrt(sum));
}

// One block. Norms are >= 0 (or NaN), so their bits order like their values.
__global__ void largest_norm_kernel(const float* norms, int count, float* largest) {
  __shared__ unsigned warp_max[32];
  unsigned bits = 0;
  for (int r = static_cast<int>(threadIdx.x); r < count; r += static_cast<int>(blockDim.x))
    bits = max(bits, __float_as_uint(norms[r]) & 0x7fffffffu);  // -0 as 0
  bits = __reduce_max_sync(0xffffffffu, bits);
  if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = bits;
  __syncthreads();
  if (threadIdx.x < 32) {
    bits = threadIdx.x < blockDim.x / 32 ? warp_max[threadIdx.x] : 0u;
    bits = __reduce_max_sync(0xffffffffu, bits);
    if (threadIdx.x == 0) *largest = __uint_as_float(bits);
  }
}

// Rows over grid y, columns over grid x (no 64-bit division per element).
__global__ void finish_kernel(DistanceInputs in, float* tile, int rows, int cols, int ld, int col0) {
  for (int r = static_cast<int>(blockIdx.y); r < rows; r += static_cast<int>(gridDim.y)) {
    float* row = tile + static_cast<std::int64_t>(r) * ld;
    for (int c = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x); c < cols;
         c += static_cast<int>(gridDim.x * blockDim.x))
      row[c] = detail::finish_distance(in, r, col0 + c, row[c]);
  }
}

}  // namespace

cudaError_t row_norms(Metric metric, const float* rows, int count, int dims, float* norms, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  constexpr int kThreads = 128;
  row_norms_kernel<<<(count + kThreads - 1) / kThreads, kThreads, 0, stream>>>(metric, rows, count, dims, norms);
  return cudaGetLastError();
}

cudaError_t largest_norm(const float* norms, int count, float* largest, cudaStream_t stream) {
  largest_norm_kernel<<<1, 1024, 0, stream>>>(norms, std::max(count, 0), largest);
  return cudaGetLastError();
}

cudaError_t finish_distances(const DistanceInputs& in, float* tile, int rows, int cols, int ld, int col0,
                             cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (ld < cols) return cudaErrorInvalidValue;
  constexpr int kThreads = 256;
  const dim3 grid(static_cast<unsigned>(std::min(cols / kThreads + 1, 1024)),
                  static_cast<unsigned>(std::min(rows, 65535)));
  finish_kernel<<<grid, kThreads, 0, stream>>>(in, tile, rows, cols, ld, col0);
  return cudaGetLastError();
}

}  // namespace hb::kernels::knn
