// tensor, scan path (at most kTensorScanMaxDims = 16 bands, k <= kTensorScanMaxK = 8,
// tensor_scan_limits.hpp): one thread a query row scans the whole chunk, its row in
// registers and the chunk's rows staged through shared memory, and keeps its k closest
// pairs sorted in registers. Each pair's distance is the one tensor's exact stage
// computes: q . t as one FMA chain in band order from 0 (tensor.cu's
// chain_inner_product), finished by euclidean_distance (the expansion, recomputed in
// FP64 where it lost its digits). So its lists are tensor's: the k smallest pairs of
// that distance, ties to the lower index, whatever the chunking. At small d tensor's
// TF32 slab, and fast's SGEMM slab, write every product to memory and read it back; here
// a pair costs its d FMAs and a compare. Its limits are where it ran ahead of fast (one
// H200, bench_knn, 10^6 queries): at N = 10^5 and k = 5, 3.50-3.80 against 2.96-3.32 M
// queries/s for d = 8 to 16; at k = 10 it tied, and with a list of 32 registers (k = 32)
// it ran at 1.2 against 2.7 M; from d = 20 fast led. In `hyperbatch run` (d = 10, N =
// 1600, k = 5) the GPU's search of a flightline took 0.049-0.054 s against fast's
// 0.090-0.092 s.
#include "kernels/knn/detail/pair.cuh"
#include "kernels/knn/knn.cuh"

namespace hb::kernels::knn {
namespace {

constexpr int kThreads = 128;
constexpr int kStageRows = 256;  // chunk rows staged at a time: 16 KiB

__device__ __forceinline__ float no_distance() { return __int_as_float(0x7f800000); }

// The running list of row r, in registers: its first k slots as stored, the rest empty.
template <int K>
struct RegisterList {
  float d[K];
  std::int64_t i[K];
  float worst_d;           // the k-th pair: a pair must be closer to enter
  std::int64_t worst_i;

  __device__ void load(const Lists& lists, int r, int k) {
#pragma unroll
    for (int j = 0; j < K; ++j) {
      const bool in = j < k;
      d[j] = in ? lists.distance[static_cast<std::int64_t>(r) * k + j] : no_distance();
      i[j] = in ? lists.index[static_cast<std::int64_t>(r) * k + j] : detail::kNoIndex;
    }
    take_worst(k);
  }

  __device__ void store(const Lists& lists, int r, int k) const {
#pragma unroll
    for (int j = 0; j < K; ++j)
      if (j < k) {
        lists.distance[static_cast<std::int64_t>(r) * k + j] = d[j];
        lists.index[static_cast<std::int64_t>(r) * k + j] = i[j];
      }
  }

  // A pair closer than the k-th replaces it and moves up to its place: the rest is
  // sorted, so one pass from the end places it. Every index is a constant (registers).
  __device__ void insert(float dist, std::int64_t index, int k) {
#pragma unroll
    for (int j = 0; j < K; ++j)
      if (j == k - 1) {
        d[j] = dist;
        i[j] = index;
      }
#pragma unroll
    for (int j = K - 1; j > 0; --j)
      if (j < k && detail::closer(d[j], i[j], d[j - 1], i[j - 1])) {
        const float td = d[j];
        d[j] = d[j - 1];
        d[j - 1] = td;
        const std::int64_t ti = i[j];
        i[j] = i[j - 1];
        i[j - 1] = ti;
      }
    take_worst(k);
  }

  __device__ void take_worst(int k) {
#pragma unroll
    for (int j = 0; j < K; ++j)
      if (j == k - 1) {
        worst_d = d[j];
        worst_i = i[j];
      }
  }
};

template <int D, int K>
__global__ void __launch_bounds__(kThreads) tensor_scan_kernel(DistanceInputs in, int rows, int cols,
                                                             std::int64_t first_index, Lists running) {
  __shared__ __align__(16) float train[kStageRows * D];
  __shared__ float norms[kStageRows];
  const int r = static_cast<int>(blockIdx.x) * kThreads + static_cast<int>(threadIdx.x);
  const bool live = r < rows;
  const int dims = in.dims;
  const int k = running.k;
  float q[D];
#pragma unroll
  for (int b = 0; b < D; ++b) q[b] = live && b < dims ? in.queries[static_cast<std::int64_t>(r) * dims + b] : 0.0f;
  RegisterList<K> list;
  if (live) list.load(running, r, k);
  const float qn = live ? in.query_norms[r] : 0.0f;
  const float refine = detail::refine_below(dims);
  for (int c0 = 0; c0 < cols; c0 += kStageRows) {
    const int n = min(kStageRows, cols - c0);
    __syncthreads();  // the previous stage is read
    for (int e = static_cast<int>(threadIdx.x); e < n * dims; e += kThreads)
      train[(e / dims) * D + e % dims] = in.train[static_cast<std::int64_t>(c0) * dims + e];
    for (int e = static_cast<int>(threadIdx.x); e < n; e += kThreads) norms[e] = in.train_norms[c0 + e];
    __syncthreads();
    if (!live) continue;
    for (int c = 0; c < n; ++c) {
      const float4* t = reinterpret_cast<const float4*>(train + c * D);
      float ip = 0.0f;  // tensor's chain: one FMA a band, in band order, from 0
#pragma unroll
      for (int b4 = 0; b4 < D / 4; ++b4) {
        const float4 v = t[b4];
        if (4 * b4 < dims) ip = __fmaf_rn(q[4 * b4], v.x, ip);
        if (4 * b4 + 1 < dims) ip = __fmaf_rn(q[4 * b4 + 1], v.y, ip);
        if (4 * b4 + 2 < dims) ip = __fmaf_rn(q[4 * b4 + 2], v.z, ip);
        if (4 * b4 + 3 < dims) ip = __fmaf_rn(q[4 * b4 + 3], v.w, ip);
      }
      const int local = c0 + c;
      const float dist = detail::euclidean_distance(in, r, local, ip, qn, norms[c], refine);
      const std::int64_t index = first_index + local;
      if (detail::closer(dist, index, list.worst_d, list.worst_i)) list.insert(dist, index, k);
    }
  }
  if (live) list.store(running, r, k);
}

template <int D, int K>
cudaError_t launch_scan(const DistanceInputs& in, int rows, int cols, std::int64_t first_index, Lists running,
                        cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((rows + kThreads - 1) / kThreads);
  tensor_scan_kernel<D, K><<<blocks, kThreads, 0, stream>>>(in, rows, cols, first_index, running);
  return cudaGetLastError();
}

}  // namespace

cudaError_t tensor_scan(const DistanceInputs& in, int rows, int cols, std::int64_t first_index, Lists running,
                        cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return cudaSuccess;
  if (in.metric != Metric::euclidean || in.dims < 1 || in.dims > kTensorScanMaxDims || running.k < 1 ||
      running.k > kTensorScanMaxK)
    return cudaErrorInvalidValue;
  return launch_scan<kTensorScanMaxDims, kTensorScanMaxK>(in, rows, cols, first_index, running, stream);
}

}  // namespace hb::kernels::knn
