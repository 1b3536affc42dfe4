// The owning GPU hopscotch table (cuCollections' container): allocates the slots and
// payloads, hands out the device view (ref()) and runs bulk operations, one warp per
// operation. Plain C++ header: includable from g++ translation units.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <span>
#include <vector>

#include "src/base/error.hpp"
#include "kernels/hash/hopscotch_ref.cuh"

namespace hb::hash {

// What the host copies back for validation (src/hash/validate.hpp).
struct TableSnapshot {
  std::uint32_t capacity = 0;
  std::vector<std::uint64_t> slots;
  std::vector<Entry> entries;
};

class GpuHopscotchTable {
 public:
  // An empty table of `capacity` homes (slot_count(capacity) slots) on the current device.
  static Result<GpuHopscotchTable> create(std::uint32_t capacity);
  GpuHopscotchTable(GpuHopscotchTable&& other) noexcept;
  GpuHopscotchTable& operator=(GpuHopscotchTable&& other) noexcept;
  GpuHopscotchTable(const GpuHopscotchTable&) = delete;
  GpuHopscotchTable& operator=(const GpuHopscotchTable&) = delete;
  ~GpuHopscotchTable();

  HopscotchRef ref() const { return {slots_, entries_, capacity_}; }
  std::uint32_t capacity() const { return capacity_; }

  // Device arrays in and out, ordered on `stream`, no host copies (what the benchmarks
  // and other kernels' hosts use). `values` may be null: value = the key's index.
  Status run_device(const Op* ops, OpResult* results, std::size_t n, cudaStream_t stream = nullptr);
  Status insert_device(const std::uint64_t* keys, const std::uint32_t* values, OpResult* results, std::size_t n,
                       cudaStream_t stream = nullptr);
  Status find_device(const std::uint64_t* keys, OpResult* results, std::size_t n, cudaStream_t stream = nullptr);
  Status erase_device(const std::uint64_t* keys, OpResult* results, std::size_t n, cudaStream_t stream = nullptr);

  // Host arrays in, one result per operation out (synchronous).
  Result<std::vector<OpResult>> run(std::span<const Op> ops);
  Result<std::vector<OpResult>> insert(std::span<const std::uint64_t> keys, std::span<const std::uint32_t> values,
                                       GrowPolicy grow = GrowPolicy::never);
  Result<std::vector<OpResult>> find(std::span<const std::uint64_t> keys);
  Result<std::vector<OpResult>> erase(std::span<const std::uint64_t> keys);

  // Rebuilds into `capacity` homes on the device; on failure the table is unchanged.
  Status grow(std::uint32_t capacity);
  Result<std::uint64_t> size() const;  // full slots (a reduction over the slots)
  Result<TableSnapshot> snapshot() const;

 private:
  GpuHopscotchTable() = default;
  void release();

  std::uint64_t* slots_ = nullptr;
  Entry* entries_ = nullptr;
  std::uint32_t capacity_ = 0;
};

}  // namespace hb::hash
