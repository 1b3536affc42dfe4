#include "kernels/dedup/representatives.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "kernels/dedup/fingerprint.hpp"
#include "kernels/hash/detail/device_array.hpp"
#include "kernels/hash/gpu_table.hpp"
#include "src/base/cuda_error.hpp"

namespace hb::dedup {
namespace {

using hash::detail::DeviceArray;

__device__ std::uint64_t warp_fingerprint(const float* row, std::int64_t dims) {
  std::uint64_t terms = 0;
  for (std::int64_t e = threadIdx.x & 31u; e < dims; e += 32)
    terms ^= element_term(__float_as_uint(row[e]), static_cast<std::uint64_t>(e));
  for (int o = 16; o > 0; o /= 2) terms ^= __shfl_xor_sync(0xffffffffu, terms, o);
  return finish_fingerprint(terms, static_cast<std::uint64_t>(dims));
}

__device__ bool warp_rows_equal(const float* a, const float* b, std::int64_t dims) {
  bool same = true;
  for (std::int64_t e = threadIdx.x & 31u; e < dims; e += 32) same = same && __float_as_uint(a[e]) == __float_as_uint(b[e]);
  return __all_sync(0xffffffffu, same);
}

// `others`: how many rows are not their own representative (copies and collisions).
__global__ void representatives_kernel(hash::HopscotchRef table, const float* rows, std::int64_t n, std::int64_t dims,
                                       std::int64_t* rep, unsigned long long* others) {
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / 32);
  for (std::int64_t i = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32; i < n; i += warps) {
    const float* row = rows + i * dims;
    const hash::OpResult r = table.insert(warp_fingerprint(row, dims), static_cast<std::uint32_t>(i));
    std::int64_t mine = i;  // inserted, or no slot: the row stands for itself
    if (r.status == hash::OpStatus::exists)
      mine = warp_rows_equal(row, rows + std::int64_t{r.value} * dims, dims) ? std::int64_t{r.value} : kCollision;
    if ((threadIdx.x & 31u) == 0) {
      rep[i] = mine;
      if (mine != i) atomicAdd(others, 1ull);
    }
  }
}

// Every row's representative; with `only_others`, none (an empty vector) when every
// row is its own.
Result<std::vector<std::int64_t>> representatives(const float* device_rows, std::int64_t n, std::int64_t dims,
                                                  bool only_others) {
  std::vector<std::int64_t> rep;
  if (n <= 0) return rep;
  if (n > 0xffffffffll) return Error{ErrorKind::internal, {}, "dedup", "more than 2^32 rows in one tile"};
  auto table = hash::GpuHopscotchTable::create(static_cast<std::uint32_t>(std::min<std::int64_t>(hash::kMaxCapacity, n + n / 4 + 1024)));
  if (!table) return table.error();
  DeviceArray<std::int64_t> d_rep;
  DeviceArray<unsigned long long> d_others;
  HB_TRY(d_rep.allocate(static_cast<std::size_t>(n)));
  HB_TRY(d_others.allocate(1));
  HB_TRY(cuda::status(cudaMemset(d_others.data, 0, sizeof(unsigned long long)), "dedup count"));
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((n + 7) / 8, 65535));
  representatives_kernel<<<blocks, 256>>>(table->ref(), device_rows, n, dims, d_rep.data, d_others.data);
  HB_TRY(cuda::status(cudaGetLastError(), "dedup kernel"));
  unsigned long long others = 0;
  HB_TRY(cuda::status(cudaMemcpy(&others, d_others.data, sizeof(others), cudaMemcpyDeviceToHost), "dedup count"));
  if (only_others && others == 0) return rep;
  rep.resize(static_cast<std::size_t>(n));
  HB_TRY(cuda::status(cudaMemcpy(rep.data(), d_rep.data, rep.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost),
                      "download"));
  return rep;
}

}  // namespace

Result<std::vector<std::int64_t>> gpu_representatives_on_device(const float* device_rows, std::int64_t n,
                                                                std::int64_t dims) {
  return representatives(device_rows, n, dims, true);
}

Result<std::vector<std::int64_t>> gpu_representatives(std::span<const float> rows, std::int64_t dims) {
  const auto n = static_cast<std::int64_t>(dims > 0 ? rows.size() / static_cast<std::size_t>(dims) : 0);
  if (n == 0) return std::vector<std::int64_t>{};
  DeviceArray<float> d_rows;
  HB_TRY(d_rows.upload(rows));
  return representatives(d_rows.data, n, dims, false);
}

}  // namespace hb::dedup
