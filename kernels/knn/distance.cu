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

__global__ void finish_kernel(DistanceInputs in, float* tile, int rows, int cols, int ld, int col0) {
  const std::int64_t total = static_cast<std::int64_t>(rows) * cols;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int r = static_cast<int>(e / cols);
    const int c = static_cast<int>(e % cols);
    float* cell = tile + static_cast<std::int64_t>(r) * ld + c;
    *cell = detail::finish_distance(in, r, col0 + c, *cell);
  }
}

}  // namespace

cudaError_t row_norms(Metric metric, const float* rows, int count, int dims, float* norms, cudaStream_t stream) {
  if (count <= 0) return cudaSuccess;
  constexpr int kThreads = 128;
  row_norms_kernel<<<(count + kThreads - 1) / kThreads, kThreads, 0, stream>>>(metric, rows, count, dims, norms);
  return cudaGetLastError();
}

cudaError_t finish_distances(const DistanceInputs& in, float* tile, int rows, int cols, int ld, int col0,
                             cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (ld < cols) return cudaErrorInvalidValue;
  constexpr int kThreads = 256;
  const std::int64_t total = static_cast<std::int64_t>(rows) * cols;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((total + kThreads - 1) / kThreads, 1 << 20));
  finish_kernel<<<blocks, kThreads, 0, stream>>>(in, tile, rows, cols, ld, col0);
  return cudaGetLastError();
}

}  // namespace hb::kernels::knn
