// The GEMM formulation's own kernels (see sam.cuh): widen the compared bands to FP64
// for cublasDgemm, and pick the best match from its dot products.
#include <cmath>

#include "kernels/sam/detail/score.cuh"
#include "kernels/sam/sam.cuh"

namespace hb::kernels::sam {
namespace {

constexpr int kWarp = 32;
constexpr int kWarpsPerBlock = 8;

template <class T>
__global__ void gather_kernel(const T* __restrict__ raw, std::int64_t pixels, int bands, PixelRule rule,
                              double* __restrict__ x) {
  const std::int64_t total = pixels * rule.dims;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t p = i / rule.dims;
    const int k = static_cast<int>(i - p * rule.dims);
    x[i] = static_cast<double>(raw[p * bands + rule.band_index[k]]);
  }
}

__global__ void norm_kernel(const double* __restrict__ x, std::int64_t pixels, PixelRule rule, double* __restrict__ norm) {
  const std::int64_t p = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (p >= pixels) return;
  const double* row = x + p * rule.dims;
  norm[p] = detail::pixel_norm([&](int k) { return row[k]; }, rule);
}

__global__ void select_kernel(const double* __restrict__ dots, const double* __restrict__ norm, std::int64_t pixels,
                              ScoreOutputs out) {
  const std::int64_t p = (blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x) / kWarp;
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  if (p >= pixels) return;
  if (norm[p] == 0) {
    if (lane == 0) detail::mark_ignored(p, out);
    return;
  }
  const double inverse = 1.0 / norm[p];
  const double* row = dots + p * out.count;
  detail::Best best;
  for (int r = lane; r < out.count; r += kWarp) {
    const double similarity = row[r] * inverse;
    best.offer(similarity, r);
    if (out.scores) out.scores[p * out.count + r] = detail::reported(similarity, out.angles);
  }
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    const double s = __shfl_down_sync(0xffffffffu, best.similarity, offset);
    const int r = __shfl_down_sync(0xffffffffu, best.index, offset);
    best.offer(s, r);
  }
  if (lane == 0) {
    out.best[p] = best.index;
    out.best_score[p] = detail::reported(best.similarity, out.angles);
  }
}

}  // namespace

cudaError_t gather_pixels(const RawPixels& in, const PixelRule& rule, double* x, double* norm, cudaStream_t stream) {
  if (in.pixels == 0) return cudaSuccess;
  constexpr int kThreads = 256;
  const std::int64_t total = in.pixels * rule.dims;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((total + kThreads - 1) / kThreads, 65536));
  const cudaError_t launched = visit_data_type(in.type, [&](auto zero) {
    using T = decltype(zero);
    gather_kernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(in.data), in.pixels, in.bands, rule, x);
    return cudaGetLastError();
  });
  if (launched != cudaSuccess) return launched;
  norm_kernel<<<static_cast<unsigned>((in.pixels + kThreads - 1) / kThreads), kThreads, 0, stream>>>(x, in.pixels, rule,
                                                                                                    norm);
  return cudaGetLastError();
}

cudaError_t select_best(const double* dots, const double* norm, std::int64_t pixels, const ScoreOutputs& out,
                        cudaStream_t stream) {
  if (pixels == 0) return cudaSuccess;
  const auto blocks = static_cast<unsigned>((pixels + kWarpsPerBlock - 1) / kWarpsPerBlock);
  select_kernel<<<blocks, kWarp * kWarpsPerBlock, 0, stream>>>(dots, norm, pixels, out);
  return cudaGetLastError();
}

}  // namespace hb::kernels::sam
