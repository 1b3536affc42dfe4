#include "kernels/mnf/moments.cuh"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/mnf/detail/row_fill.cuh"

namespace hb::kernels::mnf {
namespace {

using detail::CenterOp;
using detail::FillPlan;
using detail::HeldPixel;
using detail::kFillCols;
using detail::kFillLanes;

template <class T>
__device__ __forceinline__ bool sample_excluded(T raw, bool has_ignore, double ignore) {
  const double x = static_cast<double>(raw);
  if constexpr (std::is_floating_point_v<T>)
    if (!isfinite(x)) return true;
  return has_ignore && x == ignore;
}

// One warp per pixel: lanes test the good bands (coalesced along the pixel's samples)
// and vote; the grid strides over pixels.
template <class T>
__global__ void mask_pixels(const T* __restrict__ raw, std::int64_t pixels, std::int64_t bands,
                            const int* __restrict__ good, int nb, bool has_ignore, double ignore,
                            std::uint8_t* __restrict__ valid) {
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / 32);
  for (std::int64_t p = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32; p < pixels; p += warps) {
    const T* px = raw + p * bands;
    bool bad = false;
#pragma unroll 4
    for (int k = lane; k < nb; k += 32) bad |= sample_excluded(px[good[k]], has_ignore, ignore);
    bad = __any_sync(0xffffffffu, bad);
    if (lane == 0) valid[p] = bad ? 0 : 1;
  }
}

// sum[k] += Σ_chunk partial[chunk][k], chunks in order: the deterministic second stage.
__global__ void add_partial_sums(const double* __restrict__ partial, std::int64_t chunks, int nb,
                                 double* __restrict__ sum) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= nb) return;
  double total = 0.0;
  for (std::int64_t c = 0; c < chunks; ++c) total += partial[c * nb + k];
  sum[k] += total;
}

template <class T, class E>
struct NoiseOp {
  const T* raw;
  const std::uint8_t* valid;
  const int* good;
  std::int64_t bands, samples;
  std::int64_t held_row0, core_row0;
  std::int64_t first_row, last_row;  // rows that own residuals
  std::int64_t col_begin, col_end;   // columns that own residuals
  NoiseWindow window;

  __device__ int band(int k) const { return good[k]; }
  __device__ bool usable(std::int64_t row, std::int64_t col) const {
    return row >= window.row_begin && row < window.row_end && col >= window.col_begin && col < window.col_end &&
           valid[(row - held_row0) * samples + col] != 0;
  }
  __device__ HeldPixel locate(std::int64_t r) const {
    const std::int64_t row = core_row0 + r / samples;
    const std::int64_t col = r % samples;
    const std::int64_t held = (row - held_row0) * samples + col;
    if (row < first_row || row >= last_row || col < col_begin || col >= col_end) return {false, held};
    bool ok = true;
    for (int i = 0; i < E::kTaps; ++i) ok = ok && usable(row + E::tap(i).row, col + E::tap(i).col);
    return {ok, held};
  }
  __device__ double value(const HeldPixel& px, int, int b) const {
    // Constant taps: the values stay in registers once the residual is inlined.
    return E::residual([&](int i) {
      return static_cast<double>(raw[(px.held + E::tap(i).row * samples + E::tap(i).col) * bands + b]);
    });
  }
};

LaunchStatus check_common(const TileView& tile, const PixelRules& rules, const std::uint8_t* valid_held) {
  if (tile.samples <= 0 || tile.bands <= 0) return LaunchStatus::invalid("tile shape");
  if (tile.held_rows < 0 || tile.core_rows < 0 || tile.core_row0 < tile.held_row0 ||
      tile.core_row0 + tile.core_rows > tile.held_row0 + tile.held_rows || tile.held_row0 < 0 ||
      tile.held_row0 + tile.held_rows > tile.lines)
    return LaunchStatus::invalid("tile rows: core must lie in held, held in the scene");
  if (tile.held_pixels() > 0 && !tile.data) return LaunchStatus::invalid("tile data");
  if (rules.nb <= 0 || rules.nb > tile.bands || !rules.good_bands) return LaunchStatus::invalid("good bands");
  if (tile.held_pixels() > 0 && !valid_held) return LaunchStatus::invalid("valid mask");
  return {};
}

LaunchStatus check_moments(const DeviceMoments& m, void* workspace, std::size_t bytes, std::int64_t rows, int nb) {
  if (!m.count || !m.sum) return LaunchStatus::invalid("moments count/sum");
  if (bytes < moments_workspace_bytes(rows, nb) || (bytes > 0 && !workspace))
    return LaunchStatus::invalid("moments workspace");
  return {};
}

// Runs fill_rows for `op` with sums, then the ordered second stage.
template <class Op>
LaunchStatus fill_with_sums(const Op& op, int nb, std::int64_t rows, double* out, DeviceMoments m, void* workspace,
                            cudaStream_t stream) {
  const FillPlan plan = detail::fill_plan(rows);
  if (plan.chunks == 0) return {};
  auto* partial = static_cast<double*>(workspace);
  const dim3 block(kFillCols, kFillLanes);
  const dim3 grid((nb + kFillCols - 1) / kFillCols, static_cast<unsigned>(plan.chunks));
  detail::fill_rows<Op, double, true>
      <<<grid, block, 0, stream>>>(op, nb, rows, plan.rows_per_chunk, out, partial, m.count);
  add_partial_sums<<<(nb + 127) / 128, 128, 0, stream>>>(partial, plan.chunks, nb, m.sum);
  return LaunchStatus::from(cudaGetLastError());
}

template <class T, class E>
LaunchStatus launch_noise(const TileView& tile, const PixelRules& rules, const std::uint8_t* valid,
                          const NoiseWindow& window, double* R, DeviceMoments m, void* workspace,
                          cudaStream_t stream) {
  constexpr Reach reach = reach_of<E>();
  const std::int64_t held_end = tile.held_row0 + tile.held_rows;
  NoiseOp<T, E> op{static_cast<const T*>(tile.data),
                   valid,
                   rules.good_bands,
                   tile.bands,
                   tile.samples,
                   tile.held_row0,
                   tile.core_row0,
                   std::max(tile.core_row0, tile.held_row0 + reach.above),
                   std::min(tile.core_row0 + tile.core_rows, held_end - reach.below),
                   reach.left,
                   tile.samples - reach.right,
                   window};
  return fill_with_sums(op, rules.nb, tile.core_pixels(), R, m, workspace, stream);
}

}  // namespace

LaunchStatus exclusion_mask(const TileView& tile, const PixelRules& rules, std::uint8_t* valid_held,
                            cudaStream_t stream) {
  if (auto s = check_common(tile, rules, valid_held); !s) return s;
  const std::int64_t pixels = tile.held_pixels();
  if (pixels == 0) return {};
  constexpr int kThreads = 256;
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((pixels + 7) / 8, 1 << 16));
  visit_data_type(tile.type, [&](auto zero) {
    using T = decltype(zero);
    mask_pixels<T><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(tile.data), pixels, tile.bands,
                                                    rules.good_bands, rules.nb, rules.has_ignore,
                                                    rules.ignore_value, valid_held);
  });
  return LaunchStatus::from(cudaGetLastError());
}

std::size_t moments_workspace_bytes(std::int64_t core_pixels, int nb) {
  return static_cast<std::size_t>(detail::fill_plan(core_pixels).chunks) * static_cast<std::size_t>(nb) *
         sizeof(double);
}

LaunchStatus convert_center_f64(const TileView& tile, const PixelRules& rules, const std::uint8_t* valid_held,
                                const double* shift, double* X, DeviceMoments moments, void* workspace,
                                std::size_t workspace_bytes, cudaStream_t stream) {
  if (auto s = check_common(tile, rules, valid_held); !s) return s;
  const std::int64_t rows = tile.core_pixels();
  if (auto s = check_moments(moments, workspace, workspace_bytes, rows, rules.nb); !s) return s;
  if (rows > 0 && (!shift || !X)) return LaunchStatus::invalid("shift / X");
  return visit_data_type(tile.type, [&](auto zero) {
    using T = decltype(zero);
    CenterOp<T> op{static_cast<const T*>(tile.data), valid_held, rules.good_bands, shift, tile.bands,
                   tile.core_offset()};
    return fill_with_sums(op, rules.nb, rows, X, moments, workspace, stream);
  });
}

LaunchStatus noise_residuals_f64(const TileView& tile, const PixelRules& rules, const std::uint8_t* valid_held,
                                 NoiseEstimator estimator, const NoiseWindow& window, double* R,
                                 DeviceMoments moments, void* workspace, std::size_t workspace_bytes,
                                 cudaStream_t stream) {
  if (auto s = check_common(tile, rules, valid_held); !s) return s;
  const std::int64_t rows = tile.core_pixels();
  if (auto s = check_moments(moments, workspace, workspace_bytes, rows, rules.nb); !s) return s;
  if (rows > 0 && !R) return LaunchStatus::invalid("R");
  return visit_estimator(estimator, [&]<class E>(E) {
    // The rows the taps reach must be held wherever the scene has them.
    constexpr Reach reach = reach_of<E>();
    const std::int64_t core_end = tile.core_row0 + tile.core_rows;
    if (tile.held_row0 + tile.held_rows < std::min(tile.lines, core_end + reach.below) ||
        tile.held_row0 > std::max<std::int64_t>(0, tile.core_row0 - reach.above))
      return LaunchStatus::invalid("tile halo: the noise estimator needs rows the tile does not hold");
    return visit_data_type(tile.type, [&](auto zero) {
      return launch_noise<decltype(zero), E>(tile, rules, valid_held, window, R, moments, workspace, stream);
    });
  });
}

}  // namespace hb::kernels::mnf
