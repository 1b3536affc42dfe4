// Transform pass of MNF/PCA on the device: Z [core pixels x m] = (x - mean) T + offset
// in FP32, two ways to be measured against each other (the MNF paper's, Zhou, Gao and Fang
// 2017, MNF-L / MNF-C):
//  - transform_sgemm: center_f32 (raw -> centred FP32 matrix, centred in FP64 first)
//    then cuBLAS SGEMM. TF32 is NOT used unless TransformOptions::allow_tf32: the
//    components must be within 1e-6 of each component's std of a float64 reference,
//    which TF32's 10-bit mantissa cannot give.
//  - transform_const: T, mean and offset in __constant__ memory (upload once per run
//    with transform_const_upload), one thread per pixel reading the raw tile directly
//    through a padded shared-memory stage: no FP32 copy of the tile is written.
// And the inverse for denoising: Y [rows x nb] = Z[:, :k] Tinv + mean (SGEMM).
// Excluded pixels get `fill` (NaN by default) in every output.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>

#include "kernels/mnf/types.cuh"

namespace hb::kernels::mnf {

struct TransformOptions {
  const double* offset = nullptr;  // device [m], added last; null = zeros
  float fill = std::numeric_limits<float>::quiet_NaN();
  bool allow_tf32 = false;
};

// Xf[p][k] = float(double(x(p, good[k])) - mean[k]) for valid core pixels, 0 otherwise.
// Row-major [core pixels x nb]; `mean` is a device [nb] FP64 vector.
LaunchStatus center_f32(const TileView& tile, const PixelRules& rules, const std::uint8_t* valid_held,
                        const double* mean, float* Xf, cudaStream_t stream);

// Bytes of FP32 workspace transform_sgemm needs (the centred tile).
std::size_t transform_sgemm_workspace_bytes(std::int64_t core_pixels, int nb);

// Z = Xf T (+ offset), T a device row-major FP32 [nb x m] matrix, Z row-major
// [core pixels x m]. The handle's stream, pointer and math modes are restored after.
LaunchStatus transform_sgemm(cublasHandle_t handle, const TileView& tile, const PixelRules& rules,
                             const std::uint8_t* valid_held, const double* mean, const float* T, int m, float* Z,
                             const TransformOptions& options, void* workspace, std::size_t workspace_bytes,
                             cudaStream_t stream);

// Whether T [nb x m] FP32, mean [nb] FP64 and offset [m] FP64 fit the 64 KB of
// constant memory (T is stored with rows padded to a multiple of 4 components and
// zero rows up to a multiple of 32 bands).
bool transform_const_fits(int nb, int m);

// Copies T (device FP32 [nb x m]), mean (device FP64 [nb]) and offset (device FP64 [m]
// or null) into constant memory, ordered on `stream`. Constant memory is one per device:
// all transform_const calls in flight on that device must use the same upload.
LaunchStatus transform_const_upload(const float* T, const double* mean, const double* offset, int nb, int m,
                                    cudaStream_t stream);

// Z as transform_sgemm, from the uploaded T/mean/offset; rules.nb and m must be those
// of the upload.
LaunchStatus transform_const(const TileView& tile, const PixelRules& rules, const std::uint8_t* valid_held, int m,
                             float* Z, float fill, cudaStream_t stream);

// Y[p][b] = Σ_j Z[p][j] Tinv[j][b] + mean[b] for j < k (the kept components: the first
// k columns of Z, row stride ldz >= k), Tinv a device row-major FP32 [k x nb] matrix,
// Y row-major [rows x nb]. Rows whose valid[p] is 0 (valid may be null) get `fill`.
LaunchStatus denoise_sgemm(cublasHandle_t handle, const float* Z, std::int64_t rows, int ldz, int k,
                           const float* Tinv, int nb, const double* mean, const std::uint8_t* valid, float* Y,
                           const TransformOptions& options, cudaStream_t stream);

}  // namespace hb::kernels::mnf
