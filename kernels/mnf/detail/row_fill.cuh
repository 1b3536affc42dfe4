// Internal to kernels/mnf: the one kernel shape behind convert_center_f64,
// noise_residuals_f64 and center_f32. A block is 32 columns (bands) x 8 pixel lanes;
// blockIdx.x picks the band group, blockIdx.y a contiguous chunk of rows (pixels).
// Consecutive threads take consecutive bands of one pixel, so both the raw BIP reads
// and the row-major writes are coalesced; each thread keeps one column fixed, so its
// column sum lives in a register and the block reduces the 8 lanes in a fixed order.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace hb::kernels::mnf::detail {

constexpr int kFillCols = 32;    // blockDim.x: bands per block (one warp)
constexpr int kFillLanes = 8;    // blockDim.y: pixels in flight per block
constexpr int kFillUnroll = 4;   // pixels per lane per step: independent loads in flight
constexpr std::int64_t kFillMaxChunks = 2048;
constexpr std::int64_t kFillMinRowsPerChunk = 512;

// How a matrix of `rows` rows is cut into row chunks (a function of rows only, never
// of the device: the reduction order, hence the rounding, is the same on every GPU).
struct FillPlan {
  std::int64_t chunks = 0;
  std::int64_t rows_per_chunk = 0;
};
inline FillPlan fill_plan(std::int64_t rows) {
  if (rows <= 0) return {};
  const std::int64_t wanted = (rows + kFillMinRowsPerChunk - 1) / kFillMinRowsPerChunk;
  const std::int64_t chunks = std::clamp<std::int64_t>(wanted, 1, kFillMaxChunks);
  const std::int64_t per = (rows + chunks - 1) / chunks;
  return {(rows + per - 1) / per, per};
}

struct HeldPixel {
  bool ok;
  std::int64_t held;  // index among the held pixels
};

template <class T>
struct CenterOp {
  const T* raw;
  const std::uint8_t* valid;
  const int* good;
  const double* shift;
  std::int64_t bands;
  std::int64_t core_offset;

  __device__ int band(int k) const { return good[k]; }
  __device__ HeldPixel locate(std::int64_t row) const {
    const std::int64_t h = core_offset + row;
    return {valid[h] != 0, h};
  }
  __device__ double value(const HeldPixel& px, int k, int b) const {
    return static_cast<double>(raw[px.held * bands + b]) - shift[k];
  }
};

// Op supplies:  Pixel locate(std::int64_t row) const   (Pixel has `bool ok`)
//               double value(const Pixel&, int k, int band) const
//               int band(int k) const
// out[row][k] = ok ? value : 0 (float or double); partial[chunk][k] = Σ out[·][k] of the
// chunk; *count += rows with ok (counted by the x-block 0 only).
template <class Op, class Out, bool kSums>
__global__ void __launch_bounds__(kFillCols* kFillLanes)
    fill_rows(Op op, int nb, std::int64_t rows, std::int64_t rows_per_chunk, Out* __restrict__ out,
              double* __restrict__ partial, unsigned long long* __restrict__ count) {
  const int k = blockIdx.x * kFillCols + threadIdx.x;
  const bool column = k < nb;
  const int band = column ? op.band(k) : 0;
  const std::int64_t begin = std::int64_t{blockIdx.y} * rows_per_chunk;
  const std::int64_t end = min(rows, begin + rows_per_chunk);
  double sum = 0.0;
  unsigned valid = 0;
  for (std::int64_t r0 = begin + threadIdx.y; r0 < end; r0 += kFillLanes * kFillUnroll) {
    double v[kFillUnroll];
    bool ok[kFillUnroll];
#pragma unroll
    for (int u = 0; u < kFillUnroll; ++u) {
      const std::int64_t r = r0 + std::int64_t{u} * kFillLanes;
      ok[u] = false;
      v[u] = 0.0;
      if (r < end) {
        const auto px = op.locate(r);
        ok[u] = px.ok;
        if (px.ok && column) v[u] = op.value(px, k, band);
      }
    }
#pragma unroll
    for (int u = 0; u < kFillUnroll; ++u) {
      const std::int64_t r = r0 + std::int64_t{u} * kFillLanes;
      if (r < end) {
        if (column) out[r * nb + k] = static_cast<Out>(v[u]);
        if constexpr (kSums) sum += v[u];
        valid += ok[u] ? 1u : 0u;
      }
    }
  }
  if constexpr (kSums) {
    __shared__ double lane_sums[kFillLanes][kFillCols];
    __shared__ unsigned lane_counts[kFillLanes];
    lane_sums[threadIdx.y][threadIdx.x] = sum;
    if (threadIdx.x == 0) lane_counts[threadIdx.y] = valid;
    __syncthreads();
    if (threadIdx.y == 0) {
      double total = 0.0;
#pragma unroll
      for (int l = 0; l < kFillLanes; ++l) total += lane_sums[l][threadIdx.x];
      if (column) partial[blockIdx.y * std::int64_t{nb} + k] = total;
      if (threadIdx.x == 0 && blockIdx.x == 0) {
        unsigned long long rows_valid = 0;
        for (int l = 0; l < kFillLanes; ++l) rows_valid += lane_counts[l];
        atomicAdd(count, rows_valid);  // integer: exact and order-free
      }
    }
  }
}

}  // namespace hb::kernels::mnf::detail
