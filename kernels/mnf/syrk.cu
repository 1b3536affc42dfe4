#include "kernels/mnf/syrk.cuh"

#include <algorithm>

#include "kernels/detail/async_copy.cuh"
#include "kernels/mnf/detail/cublas_state.hpp"

namespace hb::kernels::mnf {
namespace {

// C += Xᵀ X by the FP64 tensor cores (mma.sync m16n8k4, DMMA) in a fixed summation
// order. The upper triangle of C is cut into 112 x 112 blocks (a 224-band X is 2 x 2
// blocks, 3 of them upper, so each row of X crosses the SMs twice; 64-band blocks made
// it 4.6 times) and the rows into splits of at least 1024; each (block, split) is
// summed by one thread block into its own slice of the workspace, and the slices are
// added in split order. The plan is a function of (rows, nb) only, so the rounding is
// the same in every run and on every GPU of one architecture; each output sums its rows
// four at a time in row order, as the m8n8k4 kernel this replaced did (the same bytes).
constexpr int kEdge = 112;  // output block edge
// Warp (wr, wc) sums rows [16 wr, 16 wr + 16) of its block (one m16 tile) by columns
// [56 wc, 56 wc + 56) (7 n8 tiles, 28 accumulators a thread): 14 warps, two blocks an
// SM. Measured against a warp for all 14 column tiles (one block an SM) and against
// the m8n8k4 kernel of 7 x 7 tiles a warp: 0.237 against 0.291 and 0.307 ms a 128-line
// granule on an H200 (bench_mnf_kernels).
constexpr int kRowTile = 16;
constexpr int kColSplit = 2;
constexpr int kColTiles = kEdge / 8 / kColSplit;
constexpr int kRowWarps = kEdge / kRowTile;
constexpr int kWarps = kRowWarps * kColSplit;
constexpr int kThreads = 32 * kWarps;
constexpr int kStage = 16;           // rows of X a shared-memory stage (cp.async, two in flight)
// A fragment is 4 rows x 8 consecutive doubles: with the row stride an odd multiple of
// 64 bytes the 4 rows fall on alternate bank halves, the 2 wavefronts 256 bytes need.
constexpr int kLd = kEdge + 8;
constexpr int kPanelDoubles = kStage * kLd;
constexpr std::size_t kSharedBytes = 2 * 2 * kPanelDoubles * sizeof(double);  // 2 stages x 2 panels
constexpr std::int64_t kRowsPerSplitMin = 1024;  // fewer would cost more in partials than they gain
constexpr std::int64_t kMaxBlocks = 1024;        // caps the workspace of tall matrices

struct SyrkPlan {
  int tiles = 0;         // block rows of C
  int upper_blocks = 0;  // blocks on or above the diagonal
  std::int64_t splits = 0;
  std::int64_t rows_per_split = 0;
};

SyrkPlan syrk_plan(std::int64_t rows, int nb) {
  SyrkPlan p;
  if (rows <= 0 || nb <= 0) return p;
  p.tiles = (nb + kEdge - 1) / kEdge;
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
__device__ __forceinline__ void upper_block(int index, int tiles, int& bi, int& bj) {
  bi = 0;
  while (index >= tiles - bi) {
    index -= tiles - bi;
    ++bi;
  }
  bj = bi + index;
}

// D = A B + D for a 16 x 4 by 4 x 8 product; with g = lane / 4 and t = lane % 4 a lane
// holds A[g][t] and A[g + 8][t], B[t][g], and D[g][2t + {0, 1}], D[g + 8][2t + {0, 1}].
__device__ __forceinline__ void dmma(double (&d)[4], double a0, double a1, double b) {
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
               : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
               : "d"(a0), "d"(a1), "d"(b));
}

// Rows [row, row + kStage) x columns [col0, col0 + kEdge) of X into a panel; elements
// outside X are zero-filled (a zero row adds nothing).
__device__ __forceinline__ void stage_panel(const double* __restrict__ X, std::int64_t row, std::int64_t end, int col0,
                                            int nb, double* panel) {
  for (int e = static_cast<int>(threadIdx.x); e < kStage * kEdge; e += kThreads) {
    const int r = e / kEdge, c = e % kEdge;
    const bool valid = row + r < end && col0 + c < nb;
    async_copy::to_shared(panel + r * kLd + c, valid ? X + (row + r) * nb + col0 + c : X, valid);
  }
}

// Block (bi, bj) of the upper triangle over rows [begin, end) of split blockIdx.y. As
// C = Xᵀ X, the A fragment of bands i and the B fragment of bands j follow one lane
// pattern: X[row + lane % 4][band + lane / 4] (and band + 8 for A's second register).
__global__ void __launch_bounds__(kThreads, 2)
    syrk_blocks(const double* __restrict__ X, std::int64_t rows, int nb, int tiles, std::int64_t rows_per_split,
                double* __restrict__ partial) {
  extern __shared__ __align__(16) double shared[];
  int bi = 0, bj = 0;
  upper_block(static_cast<int>(blockIdx.x), tiles, bi, bj);
  const bool diagonal = bi == bj;
  const int i0 = bi * kEdge, j0 = bj * kEdge;
  const std::int64_t begin = std::int64_t{blockIdx.y} * rows_per_split;
  const std::int64_t end = min(rows, begin + rows_per_split);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int wr = warp % kRowWarps, wc = warp / kRowWarps;
  // On the diagonal, column tiles wholly left of this warp's first row lie below it.
  const int first_tile = diagonal ? 2 * wr - wc * kColTiles : 0;
  const auto panel = [&](std::int64_t stage, int operand) {
    return shared + ((stage & 1) * 2 + (diagonal ? 0 : operand)) * kPanelDoubles;
  };
  const auto stage_rows = [&](std::int64_t stage) {
    const std::int64_t row = begin + stage * kStage;
    stage_panel(X, row, end, i0, nb, panel(stage, 0));
    if (!diagonal) stage_panel(X, row, end, j0, nb, panel(stage, 1));
    async_copy::commit();
  };

  double acc[kColTiles][4] = {};
  const std::int64_t stages = (end - begin + kStage - 1) / kStage;
  stage_rows(0);
  for (std::int64_t s = 0; s < stages; ++s) {
    if (s + 1 < stages) {
      stage_rows(s + 1);  // into the buffer the previous stage freed
      async_copy::wait<1>();
    } else {
      async_copy::wait<0>();
    }
    __syncthreads();
    const double* A = panel(s, 0) + (lane % 4) * kLd + wr * kRowTile + lane / 4;
    const double* B = panel(s, 1) + (lane % 4) * kLd + wc * kColTiles * 8 + lane / 4;
#pragma unroll
    for (int k = 0; k < kStage; k += 4) {
      const double a0 = A[k * kLd], a1 = A[k * kLd + 8];
#pragma unroll
      for (int tj = 0; tj < kColTiles; ++tj)
        if (tj >= first_tile) dmma(acc[tj], a0, a1, B[k * kLd + 8 * tj]);
    }
    __syncthreads();  // the buffer is read before the next stage's copies overwrite it
  }
  double* out = partial + std::int64_t{blockIdx.y} * nb * nb;
#pragma unroll
  for (int tj = 0; tj < kColTiles; ++tj)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = i0 + wr * kRowTile + lane / 4 + 8 * (e / 2);
      const int c = j0 + 8 * (wc * kColTiles + tj) + 2 * (lane % 4) + e % 2;
      if (tj >= first_tile && r < nb && c < nb && c >= r) out[std::int64_t{r} * nb + c] = acc[tj][e];
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
  if (const cudaError_t e = cudaFuncSetAttribute(syrk_blocks, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                 static_cast<int>(kSharedBytes));
      e != cudaSuccess)
    return LaunchStatus::from(e);
  auto* partial = static_cast<double*>(workspace);
  const dim3 grid(static_cast<unsigned>(p.upper_blocks), static_cast<unsigned>(p.splits));
  syrk_blocks<<<grid, kThreads, kSharedBytes, stream>>>(X, rows, nb, p.tiles, p.rows_per_split, partial);
  add_splits<<<blocks_for(std::int64_t{nb} * nb, 256), 256, 0, stream>>>(partial, p.splits, nb, C);
  return LaunchStatus::from(cudaGetLastError());
}

LaunchStatus symmetrize_upper(double* C, int nb, cudaStream_t stream) {
  if (nb <= 0 || !C) return LaunchStatus::invalid("symmetrize arguments");
  mirror_upper<<<blocks_for(std::int64_t{nb} * nb, 256), 256, 0, stream>>>(C, nb);
  return LaunchStatus::from(cudaGetLastError());
}

}  // namespace hb::kernels::mnf
