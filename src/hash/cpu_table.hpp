// The hopscotch table on the host, one thread: the same slot layout, neighbourhood
// (H = 31), probe limit and statuses as the GPU table (kernels/hash), so the contract
// tests run unchanged on both. The CPU backend's dedup uses it; ShardedCpuTable makes it
// concurrent.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "src/base/error.hpp"
#include "kernels/hash/layout.hpp"

namespace hb::hash {

class CpuHopscotchTable {
 public:
  explicit CpuHopscotchTable(std::uint32_t capacity = 1024);

  OpResult insert(std::uint64_t key, std::uint32_t value);
  OpResult erase(std::uint64_t key);
  OpResult find(std::uint64_t key) const;
  OpResult apply(const Op& op);

  // One result per operation, in order.
  std::vector<OpResult> run(std::span<const Op> ops);
  // Bulk insert, as GpuHopscotchTable::insert.
  Result<std::vector<OpResult>> insert(std::span<const std::uint64_t> keys, std::span<const std::uint32_t> values,
                                       GrowPolicy grow = GrowPolicy::never);

  // Rebuilds into a table of `capacity` homes (larger or smaller); on failure (some
  // key found no slot) the table is left as it was.
  Status grow(std::uint32_t capacity);

  std::uint32_t capacity() const { return capacity_; }
  std::uint64_t size() const { return size_; }
  std::span<const std::uint64_t> slots() const { return slots_; }
  std::span<const Entry> entries() const { return entries_; }

 private:
  std::int64_t locate(std::uint64_t key, std::uint32_t home, std::uint64_t tag) const;
  // Moves an item so that the free slot `empty` comes closer to its home; returns the
  // new free slot, or -1 when no item in the H slots before `empty` may move into it.
  std::int64_t move_closer(std::uint64_t empty);

  std::uint32_t capacity_;
  std::uint64_t size_ = 0;
  std::vector<std::uint64_t> slots_;
  std::vector<Entry> entries_;
};

}  // namespace hb::hash
