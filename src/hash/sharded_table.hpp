// The concurrent CPU table: CpuHopscotchTable shards, each behind its own spin lock,
// a key's shard chosen by a second hash. Fine-grained enough that all cores of a host
// work at once (the benchmark's "best CPU table"); same statuses as the other tables.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "src/hash/cpu_table.hpp"

namespace hb::hash {

class ShardedCpuTable {
 public:
  // `capacity` homes in all, split over `shards` shards (rounded up to a power of two).
  explicit ShardedCpuTable(std::uint64_t capacity, std::uint32_t shards = 1024);

  OpResult apply(const Op& op);  // thread-safe
  // Applies every operation with `threads` threads (0 = hardware concurrency); ops of
  // one batch run concurrently, in no particular order, like a GPU launch.
  std::vector<OpResult> run(std::span<const Op> ops, unsigned threads = 0);

  std::uint64_t size() const;
  std::size_t shard_count() const { return shards_.size(); }
  const CpuHopscotchTable& shard(std::size_t i) const { return shards_[i]->table; }

 private:
  struct Shard {
    std::atomic_flag busy = ATOMIC_FLAG_INIT;
    CpuHopscotchTable table;
    explicit Shard(std::uint32_t capacity) : table(capacity) {}
  };
  std::size_t shard_of(std::uint64_t key) const;

  std::vector<std::unique_ptr<Shard>> shards_;
};

// Runs fn(begin, end) over [0, n) split into `threads` contiguous parts.
void parallel_ranges(std::size_t n, unsigned threads, const std::function<void(std::size_t, std::size_t)>& fn);

}  // namespace hb::hash
