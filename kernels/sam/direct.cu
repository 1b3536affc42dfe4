// The direct SAM/SCM kernel (see sam.cuh). Pixels are staged as float: exact for the
// integer and float32 scenes this reads (float64 scenes lose their low bits here; the
// GEMM formulation keeps them). Accumulation is FP64.
#include <cmath>

#include "kernels/sam/sam.cuh"
#include "kernels/sam/detail/score.cuh"

namespace hb::kernels::sam {
namespace {

__constant__ double c_references[kConstantDoubles];

template <bool kConstant>
__device__ __forceinline__ double reference(const double* __restrict__ global, std::int64_t index) {
  if constexpr (kConstant) return c_references[index];
  else return __ldg(global + index);
}

template <class T, bool kConstant>
__global__ void direct_kernel(const T* __restrict__ raw, std::int64_t pixels, int bands, PixelRule rule,
                              const double* __restrict__ references, int count_padded, ScoreOutputs out) {
  extern __shared__ float staged[];  // [dims][blockDim.x + 1]
  const int width = blockDim.x;
  const int pitch = width + 1;
  const int dims = rule.dims;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * width;
  const int n = static_cast<int>(min(static_cast<std::int64_t>(width), pixels - first));
  // Consecutive threads read consecutive bands of a pixel: the block's pixels are one
  // contiguous stretch of the tile.
  for (int idx = threadIdx.x; idx < n * dims; idx += width) {
    const int i = idx / dims;
    const int k = idx - i * dims;
    staged[k * pitch + i] = static_cast<float>(raw[(first + i) * bands + rule.band_index[k]]);
  }
  __syncthreads();
  if (static_cast<int>(threadIdx.x) >= n) return;
  const std::int64_t p = first + threadIdx.x;
  const float* x = staged + threadIdx.x;
  const double norm = detail::pixel_norm([&](int k) { return x[k * pitch]; }, rule);
  if (norm == 0) {
    detail::mark_ignored(p, out);
    return;
  }
  const double inverse = 1.0 / norm;
  detail::Best best;
  for (int r0 = 0; r0 < count_padded; r0 += kReferenceBlock) {
    double acc[kReferenceBlock] = {};
    const std::int64_t base = static_cast<std::int64_t>(r0) * dims;
    for (int k = 0; k < dims; ++k) {
      const double v = x[k * pitch];
#pragma unroll
      for (int j = 0; j < kReferenceBlock; ++j) acc[j] = fma(v, reference<kConstant>(references, base + j * dims + k), acc[j]);
    }
#pragma unroll
    for (int j = 0; j < kReferenceBlock; ++j) {
      const int r = r0 + j;
      if (r >= out.count) break;
      const double similarity = acc[j] * inverse;
      best.offer(similarity, r);
      if (out.scores) out.scores[p * out.count + r] = detail::reported(similarity, out.angles);
    }
  }
  out.best[p] = best.index;
  out.best_score[p] = detail::reported(best.similarity, out.angles);
}

int block_pixels(int dims) {
  constexpr int kSharedLimit = 200 * 1024;
  for (const int width : {128, 64, 32})
    if (static_cast<std::int64_t>(width + 1) * dims * 4 <= (width == 128 ? 48 * 1024 : kSharedLimit)) return width;
  return 0;
}

template <class T, bool kConstant>
cudaError_t launch(const RawPixels& in, const PixelRule& rule, const double* references, int count_padded,
                   const ScoreOutputs& out, cudaStream_t stream) {
  const int width = block_pixels(rule.dims);
  if (width == 0) return cudaErrorInvalidValue;
  const auto shared = static_cast<std::size_t>(width + 1) * static_cast<std::size_t>(rule.dims) * sizeof(float);
  auto kernel = direct_kernel<T, kConstant>;
  if (auto e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared));
      e != cudaSuccess)
    return e;
  const auto blocks = static_cast<unsigned>((in.pixels + width - 1) / width);
  if (blocks == 0) return cudaSuccess;
  kernel<<<blocks, width, shared, stream>>>(static_cast<const T*>(in.data), in.pixels, in.bands, rule, references,
                                            count_padded, out);
  return cudaGetLastError();
}

}  // namespace

cudaError_t upload_constant_references(const double* host, std::int64_t n, cudaStream_t stream) {
  if (n > kConstantDoubles) return cudaErrorInvalidValue;
  return cudaMemcpyToSymbolAsync(c_references, host, static_cast<std::size_t>(n) * sizeof(double), 0,
                                 cudaMemcpyHostToDevice, stream);
}

cudaError_t score_direct(const RawPixels& in, const PixelRule& rule, const double* references, int count_padded,
                         const ScoreOutputs& out, cudaStream_t stream) {
  return visit_data_type(in.type, [&](auto zero) {
    using T = decltype(zero);
    return references ? launch<T, false>(in, rule, references, count_padded, out, stream)
                      : launch<T, true>(in, rule, nullptr, count_padded, out, stream);
  });
}

}  // namespace hb::kernels::sam
