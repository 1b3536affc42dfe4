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

__global__ void representatives_kernel(hash::HopscotchRef table, const float* rows, std::int64_t n, std::int64_t dims,
                                       std::int64_t* rep) {
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / 32);
  for (std::int64_t i = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32; i < n; i += warps) {
    const float* row = rows + i * dims;
    const hash::OpResult r = table.insert(warp_fingerprint(row, dims), static_cast<std::uint32_t>(i));
    std::int64_t mine = i;  // inserted, or no slot: the row stands for itself
    if (r.status == hash::OpStatus::exists)
      mine = warp_rows_equal(row, rows + std::int64_t{r.value} * dims, dims) ? std::int64_t{r.value} : kCollision;
    if ((threadIdx.x & 31u) == 0) rep[i] = mine;
  }
}

}  // namespace

Result<std::vector<std::int64_t>> gpu_representatives_on_device(const float* device_rows, std::int64_t n,
                                                                std::int64_t dims) {
  std::vector<std::int64_t> rep(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
  if (n <= 0) return rep;
  if (n > 0xffffffffll) return Error{ErrorKind::internal, {}, "dedup", "more than 2^32 rows in one tile"};
  auto table = hash::GpuHopscotchTable::create(static_cast<std::uint32_t>(std::min<std::int64_t>(hash::kMaxCapacity, n + n / 4 + 1024)));
  if (!table) return table.error();
  DeviceArray<std::int64_t> d_rep;
  HB_TRY(d_rep.allocate(rep.size()));
  const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((n + 7) / 8, 65535));
  representatives_kernel<<<blocks, 256>>>(table->ref(), device_rows, n, dims, d_rep.data);
  HB_TRY(cuda::status(cudaGetLastError(), "dedup kernel"));
  HB_TRY(cuda::status(cudaMemcpy(rep.data(), d_rep.data, rep.size() * sizeof(std::int64_t), cudaMemcpyDeviceToHost),
                 "download"));
  return rep;
}

Result<std::vector<std::int64_t>> gpu_representatives(std::span<const float> rows, std::int64_t dims) {
  const auto n = static_cast<std::int64_t>(dims > 0 ? rows.size() / static_cast<std::size_t>(dims) : 0);
  if (n == 0) return std::vector<std::int64_t>{};
  DeviceArray<float> d_rows;
  HB_TRY(d_rows.upload(rows));
  return gpu_representatives_on_device(d_rows.data, n, dims);
}

}  // namespace hb::dedup
