#include "kernels/hash/gpu_table.hpp"

#include <string>
#include <utility>

#include "kernels/hash/detail/device_array.hpp"
#include "kernels/hash/detail/launch.cuh"
#include "src/base/cuda_error.hpp"

namespace hb::hash {
namespace {

using detail::DeviceArray;

template <class T>
Result<std::vector<T>> download(const T* device, std::size_t n) {
  std::vector<T> host(n);
  HB_TRY(cuda::status(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost), "download"));
  return host;
}

__global__ void count_full(const std::uint64_t* slots, std::uint64_t n, unsigned long long* count) {
  unsigned long long mine = 0;
  for (std::uint64_t i = std::uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += std::uint64_t{gridDim.x} * blockDim.x)
    mine += slot::full(slots[i]) ? 1 : 0;
  for (int o = 16; o > 0; o /= 2) mine += __shfl_down_sync(0xffffffffu, mine, o);
  if ((threadIdx.x & 31u) == 0) atomicAdd(count, mine);
}

// Every stored item as an insert operation, compacted with one atomic per warp.
__global__ void gather_items(const std::uint64_t* slots, const Entry* entries, std::uint64_t n, Op* out,
                             unsigned long long* count) {
  for (std::uint64_t base = std::uint64_t{blockIdx.x} * blockDim.x; base < n; base += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::uint64_t i = base + threadIdx.x;
    const bool full = i < n && slot::full(slots[i]);
    const unsigned mask = __ballot_sync(0xffffffffu, full);
    unsigned long long first = 0;
    if ((threadIdx.x & 31u) == 0 && mask != 0) first = atomicAdd(count, static_cast<unsigned long long>(__popc(mask)));
    first = __shfl_sync(0xffffffffu, first, 0);
    if (full) out[first + __popc(mask & ((1u << (threadIdx.x & 31u)) - 1u))] = {entries[i].key, entries[i].value, OpKind::insert};
  }
}

}  // namespace

Result<GpuHopscotchTable> GpuHopscotchTable::create(std::uint32_t capacity) {
  if (capacity == 0 || capacity > kMaxCapacity)
    return Error{ErrorKind::usage, {}, "capacity", "a table holds 1 to 2^32 - 65 homes"};
  GpuHopscotchTable t;
  t.capacity_ = capacity;
  const std::uint64_t n = slot_count(capacity);
  HB_TRY(cuda::status(cudaMalloc(&t.slots_, n * sizeof(std::uint64_t)), "cudaMalloc slots"));
  HB_TRY(cuda::status(cudaMalloc(&t.entries_, n * sizeof(Entry)), "cudaMalloc entries"));
  HB_TRY(cuda::status(cudaMemset(t.slots_, 0, n * sizeof(std::uint64_t)), "cudaMemset"));
  HB_TRY(cuda::status(cudaMemset(t.entries_, 0, n * sizeof(Entry)), "cudaMemset"));
  return Result<GpuHopscotchTable>(std::move(t));
}

GpuHopscotchTable::GpuHopscotchTable(GpuHopscotchTable&& other) noexcept { *this = std::move(other); }

GpuHopscotchTable& GpuHopscotchTable::operator=(GpuHopscotchTable&& other) noexcept {
  if (this != &other) {
    release();
    slots_ = std::exchange(other.slots_, nullptr);
    entries_ = std::exchange(other.entries_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

GpuHopscotchTable::~GpuHopscotchTable() { release(); }

void GpuHopscotchTable::release() {
  cudaFree(slots_);
  cudaFree(entries_);
  slots_ = nullptr;
  entries_ = nullptr;
}

Status GpuHopscotchTable::run_device(const Op* ops, OpResult* results, std::size_t n, cudaStream_t stream) {
  return cuda::status(detail::launch_apply(ref(), detail::OpsSource{ops}, results, n, stream), "hash ops");
}
Status GpuHopscotchTable::insert_device(const std::uint64_t* keys, const std::uint32_t* values, OpResult* results,
                                        std::size_t n, cudaStream_t stream) {
  return cuda::status(detail::launch_apply(ref(), detail::KeysSource{keys, values, OpKind::insert}, results, n, stream),
                     "hash insert");
}
Status GpuHopscotchTable::find_device(const std::uint64_t* keys, OpResult* results, std::size_t n, cudaStream_t stream) {
  return cuda::status(detail::launch_apply(ref(), detail::KeysSource{keys, nullptr, OpKind::find}, results, n, stream),
                     "hash find");
}
Status GpuHopscotchTable::erase_device(const std::uint64_t* keys, OpResult* results, std::size_t n, cudaStream_t stream) {
  return cuda::status(detail::launch_apply(ref(), detail::KeysSource{keys, nullptr, OpKind::erase}, results, n, stream),
                     "hash erase");
}

Result<std::vector<OpResult>> GpuHopscotchTable::run(std::span<const Op> ops) {
  DeviceArray<Op> d_ops;
  DeviceArray<OpResult> d_results;
  HB_TRY(d_ops.upload(ops));
  HB_TRY(d_results.allocate(ops.size()));
  HB_TRY(run_device(d_ops.data, d_results.data, ops.size()));
  return download(d_results.data, ops.size());
}

Result<std::vector<OpResult>> GpuHopscotchTable::insert(std::span<const std::uint64_t> keys,
                                                        std::span<const std::uint32_t> values, GrowPolicy grow_policy) {
  if (values.size() != keys.size()) return Error{ErrorKind::internal, {}, "values", "one value per key"};
  std::vector<Op> ops(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) ops[i] = {keys[i], values[i], OpKind::insert};
  auto results = run(ops);
  if (!results || grow_policy == GrowPolicy::never) return results;
  for (int round = 0; round < 8; ++round) {
    std::vector<std::size_t> failed;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (is_full_status((*results)[i].status)) failed.push_back(i);
    }
    if (failed.empty()) break;
    const std::uint64_t bigger = std::min<std::uint64_t>(kMaxCapacity, std::uint64_t{capacity_} * 2);
    HB_TRY(grow(static_cast<std::uint32_t>(bigger)));
    std::vector<Op> retry(failed.size());
    for (std::size_t j = 0; j < failed.size(); ++j) retry[j] = ops[failed[j]];
    auto again = run(retry);
    if (!again) return again.error();
    for (std::size_t j = 0; j < failed.size(); ++j) (*results)[failed[j]] = (*again)[j];
  }
  return results;
}

Result<std::vector<OpResult>> GpuHopscotchTable::find(std::span<const std::uint64_t> keys) {
  std::vector<Op> ops(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) ops[i] = {keys[i], 0, OpKind::find};
  return run(ops);
}

Result<std::vector<OpResult>> GpuHopscotchTable::erase(std::span<const std::uint64_t> keys) {
  std::vector<Op> ops(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) ops[i] = {keys[i], 0, OpKind::erase};
  return run(ops);
}

Result<std::uint64_t> GpuHopscotchTable::size() const {
  DeviceArray<unsigned long long> count;
  HB_TRY(count.allocate(1));
  HB_TRY(cuda::status(cudaMemset(count.data, 0, sizeof(unsigned long long)), "cudaMemset"));
  count_full<<<detail::grid_for(slot_count(capacity_) / 8), 256>>>(slots_, slot_count(capacity_), count.data);
  HB_TRY(cuda::status(cudaGetLastError(), "count"));
  auto host = download(count.data, 1);
  if (!host) return host.error();
  return static_cast<std::uint64_t>((*host)[0]);
}

Status GpuHopscotchTable::grow(std::uint32_t capacity) {
  auto bigger = create(capacity);
  if (!bigger) return bigger.error();
  const std::uint64_t n = slot_count(capacity_);
  DeviceArray<Op> items;
  DeviceArray<unsigned long long> count;
  HB_TRY(items.allocate(n));
  HB_TRY(count.allocate(1));
  HB_TRY(cuda::status(cudaMemset(count.data, 0, sizeof(unsigned long long)), "cudaMemset"));
  gather_items<<<detail::grid_for(n / 8), 256>>>(slots_, entries_, n, items.data, count.data);
  HB_TRY(cuda::status(cudaGetLastError(), "gather"));
  auto stored = download(count.data, 1);
  if (!stored) return stored.error();
  const auto m = static_cast<std::size_t>((*stored)[0]);
  DeviceArray<OpResult> results;
  HB_TRY(results.allocate(m));
  HB_TRY(bigger->run_device(items.data, results.data, m));
  auto statuses = download(results.data, m);
  if (!statuses) return statuses.error();
  for (const OpResult& r : *statuses)
    if (r.status != OpStatus::inserted)
      return Error{ErrorKind::resource, {}, "capacity",
                   std::string("rebuilding into a larger table: ") + op_status_name(r.status)};
  *this = std::move(*bigger);
  return {};
}

Result<TableSnapshot> GpuHopscotchTable::snapshot() const {
  const std::uint64_t n = slot_count(capacity_);
  auto slots = download(slots_, n);
  if (!slots) return slots.error();
  auto entries = download(entries_, n);
  if (!entries) return entries.error();
  return TableSnapshot{capacity_, std::move(*slots), std::move(*entries)};
}

}  // namespace hb::hash
