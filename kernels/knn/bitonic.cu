// bitonic (GS_KNN's large-k method): each row streams through a shared-memory buffer
// of B = max(2 * pow2(k), 2048) pairs. The buffer is bitonic-sorted; its first pow2(k)
// pairs are kept and the rest refilled with the next columns until the row is done.
// O(cols * log^2 B) per row, nearly independent of k.
#include <algorithm>

#include "kernels/knn/detail/pair.cuh"

namespace hb::kernels::knn {
namespace {

constexpr int kThreads = 512;
constexpr int kMinBuffer = 2048;
constexpr int kMaxBuffer = 16384;  // 128 KiB of shared memory: k up to 8192

int pow2_at_least(int n) {
  int p = 1;
  while (p < n) p *= 2;
  return p;
}

__global__ void bitonic_kernel(const float* distances, int rows, int cols, std::int64_t ld, std::int64_t first_index,
                               Lists out, int kept, int buffer) {
  extern __shared__ float shared[];
  float* buf_d = shared;
  int* buf_i = reinterpret_cast<int*>(shared + buffer);
  const int r = static_cast<int>(blockIdx.x);
  if (r >= rows) return;
  const float* row = distances + static_cast<std::int64_t>(r) * ld;
  const float inf = __int_as_float(0x7f800000);
  for (int a = static_cast<int>(threadIdx.x); a < buffer; a += kThreads) {
    buf_d[a] = inf;
    buf_i[a] = detail::kNoLocal;
  }
  int next = 0;  // next column to load
  int begin = 0;  // first buffer slot to refill: everything the first time
  do {
    __syncthreads();
    for (int a = begin + static_cast<int>(threadIdx.x); a < buffer; a += kThreads) {
      const int c = next + (a - begin);
      buf_d[a] = c < cols ? row[c] : inf;
      buf_i[a] = c < cols ? c : detail::kNoLocal;
    }
    next += buffer - begin;
    begin = kept;
    detail::block_bitonic_sort(buf_d, buf_i, buffer);
  } while (next < cols);
  float* out_d = out.distance + static_cast<std::int64_t>(r) * out.k;
  std::int64_t* out_i = out.index + static_cast<std::int64_t>(r) * out.k;
  for (int j = static_cast<int>(threadIdx.x); j < out.k; j += kThreads) {
    const bool real = buf_i[j] != detail::kNoLocal;
    out_d[j] = real ? buf_d[j] : inf;
    out_i[j] = real ? first_index + buf_i[j] : detail::kNoIndex;
  }
}

}  // namespace

int bitonic_max_k() { return kMaxBuffer / 2; }

cudaError_t select_bitonic(const float* distances, int rows, int cols, std::int64_t ld, std::int64_t first_index,
                           Lists out, cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  if (out.k < 1 || out.k > bitonic_max_k() || cols < 0 || ld < cols) return cudaErrorInvalidValue;
  const int kept = pow2_at_least(out.k);
  const int buffer = std::max(2 * kept, kMinBuffer);
  const auto shared_bytes = static_cast<std::size_t>(buffer) * (sizeof(float) + sizeof(int));
  if (auto e = cudaFuncSetAttribute(bitonic_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(shared_bytes));
      e != cudaSuccess)
    return e;
  bitonic_kernel<<<static_cast<unsigned>(rows), kThreads, shared_bytes, stream>>>(distances, rows, cols, ld,
                                                                                 first_index, out, kept, buffer);
  return cudaGetLastError();
}

}  // namespace hb::kernels::knn
