// Statistics pass of MNF/PCA on the device: which pixels count, the centred FP64 data
// matrix, and the FP64 noise-residual matrix, each with its valid count and column sums
// (the cross products come from syrk.cuh). Every launcher is stream-ordered, allocates
// nothing, and takes DEVICE pointers; the caller sizes workspaces with
// moments_workspace_bytes(). Results are deterministic run to run: column sums are
// reduced in a fixed order (per block, then over blocks), counts with integer atomics.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/mnf/noise_estimators.hpp"
#include "kernels/mnf/types.cuh"

namespace hb::kernels::mnf {

// valid_held[h] = 1 when held pixel h passes the PixelRules, 0 when it is excluded.
// [held pixels] bytes. Convert, noise and transform read this mask, so the raw tile is
// inspected once per tile whatever follows.
LaunchStatus exclusion_mask(const TileView& tile, const PixelRules& rules, std::uint8_t* valid_held,
                            cudaStream_t stream);

// Workspace for convert_center_f64 / noise_residuals_f64 on a tile of `core_pixels`.
std::size_t moments_workspace_bytes(std::int64_t core_pixels, int nb);

// X[p][k] = x(p, good_bands[k]) - shift[k] (FP64, row-major [core pixels x nb]) for each
// valid core pixel p, and a zero row for each excluded one; adds the number of valid
// core pixels to *moments.count and the column sums of X to moments.sum[nb].
// moments.cross is not touched: follow with syrk_cublas / syrk_tiled on X.
LaunchStatus convert_center_f64(const TileView& tile, const PixelRules& rules, const std::uint8_t* valid_held,
                                const double* shift, double* X, DeviceMoments moments, void* workspace,
                                std::size_t workspace_bytes, cudaStream_t stream);

// R[p][k] = the residual owned by core pixel p (FP64, row-major [core pixels x nb]), or
// a zero row where p owns none (its estimator's taps reach outside the scene or the
// window, or an excluded pixel; noise_estimators.hpp). The tile must hold the rows the
// taps reach above and below its core where the scene has them (refused otherwise). Adds the number of residuals to
// *moments.count and their column sums to moments.sum (no shift: residuals centre on 0).
LaunchStatus noise_residuals_f64(const TileView& tile, const PixelRules& rules, const std::uint8_t* valid_held,
                                 NoiseEstimator estimator, const NoiseWindow& window, double* R,
                                 DeviceMoments moments, void* workspace, std::size_t workspace_bytes,
                                 cudaStream_t stream);

}  // namespace hb::kernels::mnf
