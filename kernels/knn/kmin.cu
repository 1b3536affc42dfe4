// kmin (GS_KNN's small-k method): k rounds per row, each a block-wide min reduction
// over the pairs that rank after the previous round's winner. Excluding by rank rather
// than by overwriting keeps the distance tile read-only. O(k * cols) per row.
#include <algorithm>

#include "kernels/knn/detail/pair.cuh"

namespace hb::kernels::knn {
namespace {

constexpr int kThreads = 256;

__global__ void kmin_kernel(const float* distances, int rows, int cols, std::int64_t ld, std::int64_t first_index,
                            Lists out) {
  __shared__ float scratch_d[32];
  __shared__ int scratch_i[32];
  const int r = static_cast<int>(blockIdx.x);
  if (r >= rows) return;
  const float* row = distances + static_cast<std::int64_t>(r) * ld;
  float* out_d = out.distance + static_cast<std::int64_t>(r) * out.k;
  std::int64_t* out_i = out.index + static_cast<std::int64_t>(r) * out.k;
  const int rounds = min(out.k, cols);
  float last_d = -__int_as_float(0x7f800000);  // -inf: every pair ranks after it
  int last_i = -1;
  for (int round = 0; round < rounds; ++round) {
    float best_d = __int_as_float(0x7f800000);
    int best_i = detail::kNoLocal;
    for (int c = static_cast<int>(threadIdx.x); c < cols; c += kThreads) {
      const float d = row[c];
      if (detail::closer(last_d, last_i, d, c) && detail::closer(d, c, best_d, best_i)) {
        best_d = d;
        best_i = c;
      }
    }
    detail::block_argmin(best_d, best_i, scratch_d, scratch_i);
    if (threadIdx.x == 0) {
      out_d[round] = best_d;
      out_i[round] = first_index + best_i;
    }
    last_d = best_d;
    last_i = best_i;
  }
  for (int j = rounds + static_cast<int>(threadIdx.x); j < out.k; j += kThreads) {
    out_d[j] = __int_as_float(0x7f800000);
    out_i[j] = detail::kNoIndex;
  }
}

}  // namespace

cudaError_t select_kmin(const float* distances, int rows, int cols, std::int64_t ld, std::int64_t first_index,
                        Lists out, cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  if (out.k < 1 || cols < 0 || ld < cols) return cudaErrorInvalidValue;
  kmin_kernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(distances, rows, cols, ld, first_index, out);
  return cudaGetLastError();
}

}  // namespace hb::kernels::knn
