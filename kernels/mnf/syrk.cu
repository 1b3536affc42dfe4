#include "kernels/mnf/syrk.cuh"

#include <algorithm>

#include "kernels/mnf/detail/cublas_state.hpp"

namespace hb::kernels::mnf {
namespace {

constexpr int kBlock = 64;      // output block edge
constexpr int kStage = 16;      // rows of X per shared-memory stage
constexpr int kThreads = 256;   // 16 x 16 threads, 4 x 4 outputs each
constexpr int kLoads = kStage * kBlock / kThreads;  // X elements each thread stages per operand
constexpr std::int64_t kRowsPerSplitMin = 4096;
constexpr std::int64_t kMaxBlocks = 1024;

struct SyrkPlan {
  int tiles = 0;         // block rows of C
  int upper_blocks = 0;  // blocks on or above the diagonal
  std::int64_t splits = 0;
  std::int64_t rows_per_split = 0;
};

// A function of (rows, nb) only: the summation order, hence the rounding, is the same
// on every GPU and every run.
SyrkPlan syrk_plan(std::int64_t rows, int nb) {
  SyrkPlan p;
  if (rows <= 0 || nb <= 0) return p;
  p.tiles = (nb + kBlock - 1) / kBlock;
  p.upper_blocks = p.tiles * (p.tiles + 1) / 2;
  const std::int64_t max_splits = std::max<std::int64_t>(1, kMaxBlocks / p.upper_blocks);
  const std::int64_t wanted = (rows + kRowsPerSplitMin - 1) / kRowsPerSplitMin;
  p.splits = std::clamp<std::int64_t>(wanted, 1, max_splits);
  std::int64_t per = (rows + p.splits - 1) / p.splits;
  per = (per + kStage - 1) / kStage * kStage;
  p.rows_per_split = per;
  p.splits = (rows + per - 1) / per;
  return p;
}

// Block (bi, bj), bj >= bi, from its index in the row-by-row list of upper blocks.
__device__ void upper_block(int index, int tiles, int& bi, int& bj) {
  bi = 0;
  while (index >= tiles - bi) {
    index -= tiles - bi;
    ++bi;
  }
  bj = bi + index;
}

// Stage rows [row, row + kStage) x columns [col0, col0 + kBlock) of X into registers;
// out-of-range elements read as zero. Consecutive threads read consecutive columns.
__device__ __forceinline__ void fetch(const double* __restrict__ X, std::int64_t row, std::int64_t row_end,
                                      int col0, int nb, double (&r)[kLoads]) {
#pragma unroll
  for (int i = 0; i < kLoads; ++i) {
    const int e = threadIdx.x + i * kThreads;
    const std::int64_t x_row = row + e / kBlock;
    const int col = col0 + e % kBlock;
    r[i] = (x_row < row_end && col < nb) ? X[x_row * nb + col] : 0.0;
  }
}

__device__ __forceinline__ void stash(const double (&r)[kLoads], double (*s)[kBlock]) {
#pragma unroll
  for (int i = 0; i < kLoads; ++i) {
    const int e = threadIdx.x + i * kThreads;
    s[e / kBlock][e % kBlock] = r[i];
  }
}

// Each block: one 64x64 block of the upper triangle over one split of the rows,
// written to its own slice of the workspace. Shared tiles are stored as X is, k-major
// ([stage row][column]): staging writes are contiguous, and in the inner loop a warp
// reads 2 distinct A addresses (broadcast) and 16 consecutive 16-byte B words, so no
// bank conflicts arise and no padding is needed.
__global__ void __launch_bounds__(kThreads)
    syrk_blocks(const double* __restrict__ X, std::int64_t rows, int nb, int tiles, std::int64_t rows_per_split,
                double* __restrict__ partial) {
  __shared__ __align__(16) double As[kStage][kBlock];
  __shared__ __align__(16) double Bs[kStage][kBlock];
  int bi = 0, bj = 0;
  upper_block(static_cast<int>(blockIdx.x), tiles, bi, bj);
  const bool diagonal = bi == bj;
  const int i0 = bi * kBlock, j0 = bj * kBlock;
  const std::int64_t begin = std::int64_t{blockIdx.y} * rows_per_split;
  const std::int64_t end = min(rows, begin + rows_per_split);
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;

  double acc[4][4] = {};
  double ra[kLoads], rb[kLoads];
  fetch(X, begin, end, i0, nb, ra);
  if (!diagonal) fetch(X, begin, end, j0, nb, rb);
  const double(*Bsrc)[kBlock] = diagonal ? As : Bs;
  for (std::int64_t row = begin; row < end; row += kStage) {
    __syncthreads();
    stash(ra, As);
    if (!diagonal) stash(rb, Bs);
    __syncthreads();
    if (row + kStage < end) {  // next stage's loads fly while this one computes
      fetch(X, row + kStage, end, i0, nb, ra);
      if (!diagonal) fetch(X, row + kStage, end, j0, nb, rb);
    }
#pragma unroll
    for (int kk = 0; kk < kStage; ++kk) {
      const double2 a0 = *reinterpret_cast<const double2*>(&As[kk][2 * ty]);
      const double2 a1 = *reinterpret_cast<const double2*>(&As[kk][32 + 2 * ty]);
      const double2 b0 = *reinterpret_cast<const double2*>(&Bsrc[kk][2 * tx]);
      const double2 b1 = *reinterpret_cast<const double2*>(&Bsrc[kk][32 + 2 * tx]);
      const double a[4] = {a0.x, a0.y, a1.x, a1.y};
      const double b[4] = {b0.x, b0.y, b1.x, b1.y};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
    }
  }
  double* out = partial + std::int64_t{blockIdx.y} * nb * nb;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int r = i0 + (i < 2 ? 2 * ty + i : 32 + 2 * ty + i - 2);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int c = j0 + (j < 2 ? 2 * tx + j : 32 + 2 * tx + j - 2);
      if (r < nb && c < nb && c >= r) out[std::int64_t{r} * nb + c] = acc[i][j];
    }
  }
}

// C[i][j] += Σ_s partial[s][i][j] over the upper triangle, splits in order.
__global__ void add_splits(const double* __restrict__ partial, std::int64_t splits, int nb, double* __restrict__ C) {
  const std::int64_t e = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::int64_t stride = std::int64_t{nb} * nb;
  if (e >= stride || e % nb < e / nb) return;
  double total = 0.0;
  for (std::int64_t s = 0; s < splits; ++s) total += partial[s * stride + e];
  C[e] += total;
}

__global__ void mirror_upper(double* C, int nb) {
  const std::int64_t e = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (e >= std::int64_t{nb} * nb) return;
  const std::int64_t i = e / nb, j = e % nb;
  if (j < i) C[e] = C[j * nb + i];
}

unsigned blocks_for(std::int64_t n, int threads) { return static_cast<unsigned>((n + threads - 1) / threads); }

}  // namespace

LaunchStatus syrk_cublas(cublasHandle_t handle, const double* X, std::int64_t rows, int nb, double* C,
                         cudaStream_t stream) {
  if (!handle || nb <= 0 || rows < 0 || !C || (rows > 0 && !X)) return LaunchStatus::invalid("syrk arguments");
  if (rows == 0) return {};
  detail::CublasCallState state(handle, stream, CUBLAS_DEFAULT_MATH);
  if (state.status() != CUBLAS_STATUS_SUCCESS) return LaunchStatus::from(state.status());
  const double one = 1.0;
  return LaunchStatus::from(
      cublasDsyrk_64(handle, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, nb, rows, &one, X, nb, &one, C, nb));
}

std::size_t syrk_tiled_workspace_bytes(std::int64_t rows, int nb) {
  const SyrkPlan p = syrk_plan(rows, nb);
  return static_cast<std::size_t>(p.splits) * static_cast<std::size_t>(nb) * static_cast<std::size_t>(nb) *
         sizeof(double);
}

LaunchStatus syrk_tiled(const double* X, std::int64_t rows, int nb, double* C, void* workspace,
                        std::size_t workspace_bytes, cudaStream_t stream) {
  if (nb <= 0 || rows < 0 || !C || (rows > 0 && !X)) return LaunchStatus::invalid("syrk arguments");
  const SyrkPlan p = syrk_plan(rows, nb);
  if (p.splits == 0) return {};
  if (!workspace || workspace_bytes < syrk_tiled_workspace_bytes(rows, nb))
    return LaunchStatus::invalid("syrk workspace");
  auto* partial = static_cast<double*>(workspace);
  const dim3 grid(static_cast<unsigned>(p.upper_blocks), static_cast<unsigned>(p.splits));
  syrk_blocks<<<grid, kThreads, 0, stream>>>(X, rows, nb, p.tiles, p.rows_per_split, partial);
  add_splits<<<blocks_for(std::int64_t{nb} * nb, 256), 256, 0, stream>>>(partial, p.splits, nb, C);
  return LaunchStatus::from(cudaGetLastError());
}

LaunchStatus symmetrize_upper(double* C, int nb, cudaStream_t stream) {
  if (nb <= 0 || !C) return LaunchStatus::invalid("symmetrize arguments");
  mirror_upper<<<blocks_for(std::int64_t{nb} * nb, 256), 256, 0, stream>>>(C, nb);
  return LaunchStatus::from(cudaGetLastError());
}

}  // namespace hb::kernels::mnf
