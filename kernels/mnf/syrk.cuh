// Cross products of the statistics pass: C += Xᵀ X for a row-major FP64 matrix
// X [rows x nb] (the output of convert_center_f64 / noise_residuals_f64), two ways to be
// measured against each other (the MNF paper's, Zhou, Gao and Fang 2017,
// MNF-L and MNF-C):
//  - syrk_cublas: cuBLAS DSYRK (FP64 tensor cores on Hopper);
//  - syrk_tiled: a hand-written tiled kernel on the FP64 tensor cores (112x112 output
//    blocks of the upper triangle, mma.sync m8n8k4, split over rows with a fixed-order
//    reduction, so the result is deterministic on every GPU of one architecture).
// Both ADD into the upper triangle of the row-major C [nb x nb] (column >= row) and
// leave the lower triangle untouched; symmetrize_upper() mirrors it when needed.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/mnf/types.cuh"

namespace hb::kernels::mnf {

// cuBLAS sees row-major X as the column-major nb x rows matrix Xᵀ, so C = Xᵀ X is
// DSYRK(OP_N, n = nb, k = rows, lda = nb). Row-major "upper" is column-major LOWER,
// which is the fill mode used. The handle's stream, pointer and math modes are set
// for the call and restored.
LaunchStatus syrk_cublas(cublasHandle_t handle, const double* X, std::int64_t rows, int nb, double* C,
                         cudaStream_t stream);

std::size_t syrk_tiled_workspace_bytes(std::int64_t rows, int nb);
LaunchStatus syrk_tiled(const double* X, std::int64_t rows, int nb, double* C, void* workspace,
                        std::size_t workspace_bytes, cudaStream_t stream);

// C[j][i] = C[i][j] for j > i: the full symmetric matrix from its upper triangle.
LaunchStatus symmetrize_upper(double* C, int nb, cudaStream_t stream);

}  // namespace hb::kernels::mnf
