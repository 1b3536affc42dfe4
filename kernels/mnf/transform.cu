// The cuBLAS side of the transform pass: centring to FP32, SGEMM, and the inverse.
#include "kernels/mnf/transform.cuh"

#include "kernels/mnf/detail/cublas_state.hpp"
#include "kernels/mnf/detail/row_fill.cuh"

namespace hb::kernels::mnf {
namespace {

using detail::kFillCols;
using detail::kFillLanes;

// M[r][j] = valid[r] ? float(double(M[r][j]) + add[j]) : fill, add and valid optional.
__global__ void finish_rows(float* __restrict__ M, std::int64_t rows, int cols, const double* __restrict__ add,
                            const std::uint8_t* __restrict__ valid, float fill) {
  const std::int64_t total = rows * cols;
  for (std::int64_t e = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x; e < total;
       e += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t r = e / cols;
    const int j = static_cast<int>(e - r * cols);
    if (valid && !valid[r])
      M[e] = fill;
    else if (add)
      M[e] = static_cast<float>(static_cast<double>(M[e]) + add[j]);
  }
}

LaunchStatus launch_finish(float* M, std::int64_t rows, int cols, const double* add, const std::uint8_t* valid,
                           float fill, cudaStream_t stream) {
  if (!add && !valid) return {};
  const std::int64_t total = rows * cols;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((total + 255) / 256, 1 << 16));
  finish_rows<<<blocks, 256, 0, stream>>>(M, rows, cols, add, valid, fill);
  return LaunchStatus::from(cudaGetLastError());
}

cublasMath_t math_mode(const TransformOptions& o) {
  return o.allow_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
}

}  // namespace

LaunchStatus center_f32(const TileView& tile, const PixelRules& rules, const std::uint8_t* valid_held,
                        const double* mean, float* Xf, cudaStream_t stream) {
  const std::int64_t rows = tile.core_pixels();
  if (rules.nb <= 0 || !rules.good_bands || rules.nb > tile.bands) return LaunchStatus::invalid("good bands");
  if (rows <= 0) return {};
  if (!tile.data || !valid_held || !mean || !Xf) return LaunchStatus::invalid("center_f32 pointers");
  const detail::FillPlan plan = detail::fill_plan(rows);
  const dim3 block(kFillCols, kFillLanes);
  const dim3 grid((rules.nb + kFillCols - 1) / kFillCols, static_cast<unsigned>(plan.chunks));
  visit_data_type(tile.type, [&](auto zero) {
    using T = decltype(zero);
    detail::CenterOp<T> op{static_cast<const T*>(tile.data), valid_held, rules.good_bands, mean, tile.bands,
                           tile.core_offset()};
    detail::fill_rows<detail::CenterOp<T>, float, false>
        <<<grid, block, 0, stream>>>(op, rules.nb, rows, plan.rows_per_chunk, Xf, nullptr, nullptr);
  });
  return LaunchStatus::from(cudaGetLastError());
}

std::size_t transform_sgemm_workspace_bytes(std::int64_t core_pixels, int nb) {
  return static_cast<std::size_t>(core_pixels) * static_cast<std::size_t>(nb) * sizeof(float);
}

LaunchStatus transform_sgemm(cublasHandle_t handle, const TileView& tile, const PixelRules& rules,
                             const std::uint8_t* valid_held, const double* mean, const float* T, int m, float* Z,
                             const TransformOptions& options, void* workspace, std::size_t workspace_bytes,
                             cudaStream_t stream) {
  const std::int64_t rows = tile.core_pixels();
  if (!handle || m <= 0 || rows < 0) return LaunchStatus::invalid("transform arguments");
  if (rows == 0) return {};
  if (!T || !Z) return LaunchStatus::invalid("transform T / Z");
  if (!workspace || workspace_bytes < transform_sgemm_workspace_bytes(rows, rules.nb))
    return LaunchStatus::invalid("transform workspace");
  auto* Xf = static_cast<float*>(workspace);
  if (auto s = center_f32(tile, rules, valid_held, mean, Xf, stream); !s) return s;
  {
    // Row-major Z = Xf T is column-major Zᵀ (m x rows) = Tᵀ (m x nb) Xfᵀ (nb x rows).
    detail::CublasCallState state(handle, stream, math_mode(options));
    if (state.status() != CUBLAS_STATUS_SUCCESS) return LaunchStatus::from(state.status());
    const float one = 1.0f, zero = 0.0f;
    const cublasStatus_t s = cublasSgemm_64(handle, CUBLAS_OP_N, CUBLAS_OP_N, m, rows, rules.nb, &one, T, m, Xf,
                                            rules.nb, &zero, Z, m);
    if (s != CUBLAS_STATUS_SUCCESS) return LaunchStatus::from(s);
  }
  return launch_finish(Z, rows, m, options.offset, valid_held + tile.core_offset(), options.fill, stream);
}

LaunchStatus denoise_sgemm(cublasHandle_t handle, const float* Z, std::int64_t rows, int ldz, int k,
                           const float* Tinv, int nb, const double* mean, const std::uint8_t* valid, float* Y,
                           const TransformOptions& options, cudaStream_t stream) {
  if (!handle || rows < 0 || k <= 0 || ldz < k || nb <= 0) return LaunchStatus::invalid("denoise arguments");
  if (rows == 0) return {};
  if (!Z || !Tinv || !mean || !Y) return LaunchStatus::invalid("denoise pointers");
  {
    // Row-major Y = Z[:, :k] Tinv is column-major Yᵀ (nb x rows) = Tinvᵀ (nb x k) Zᵀ (k x rows).
    detail::CublasCallState state(handle, stream, math_mode(options));
    if (state.status() != CUBLAS_STATUS_SUCCESS) return LaunchStatus::from(state.status());
    const float one = 1.0f, zero = 0.0f;
    const cublasStatus_t s =
        cublasSgemm_64(handle, CUBLAS_OP_N, CUBLAS_OP_N, nb, rows, k, &one, Tinv, nb, Z, ldz, &zero, Y, nb);
    if (s != CUBLAS_STATUS_SUCCESS) return LaunchStatus::from(s);
  }
  return launch_finish(Y, rows, nb, mean, valid, options.fill, stream);
}

}  // namespace hb::kernels::mnf
