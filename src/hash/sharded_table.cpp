#include "src/hash/sharded_table.hpp"

#include <algorithm>
#include <bit>
#include <thread>

namespace hb::hash {

void parallel_ranges(std::size_t n, unsigned threads, const std::function<void(std::size_t, std::size_t)>& fn) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::clamp<std::size_t>(n / 4096, 1, threads));
  std::vector<std::jthread> pool;
  const std::size_t per = (n + threads - 1) / threads;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back([&, t] { fn(std::min(n, t * per), std::min(n, (t + 1) * per)); });
  fn(0, std::min(n, per));
}

ShardedCpuTable::ShardedCpuTable(std::uint64_t capacity, std::uint32_t shards) {
  const std::uint32_t count = std::bit_ceil(std::max(1u, shards));
  const auto per_shard = static_cast<std::uint32_t>(std::min<std::uint64_t>(
      kMaxCapacity, std::max<std::uint64_t>(64, (capacity + count - 1) / count)));
  shards_.reserve(count);
  for (std::uint32_t i = 0; i < count; ++i) shards_.push_back(std::make_unique<Shard>(per_shard));
}

std::size_t ShardedCpuTable::shard_of(std::uint64_t key) const {
  // A hash independent of the shard's own home/tag bits, so every shard sees the full
  // spread of homes.
  return static_cast<std::size_t>(mix(key ^ 0x9e3779b97f4a7c15ull) >> 40) & (shards_.size() - 1);
}

OpResult ShardedCpuTable::apply(const Op& op) {
  Shard& s = *shards_[shard_of(op.key)];
  while (s.busy.test_and_set(std::memory_order_acquire)) s.busy.wait(true, std::memory_order_relaxed);
  const OpResult r = s.table.apply(op);
  s.busy.clear(std::memory_order_release);
  s.busy.notify_one();
  return r;
}

std::vector<OpResult> ShardedCpuTable::run(std::span<const Op> ops, unsigned threads) {
  std::vector<OpResult> results(ops.size());
  parallel_ranges(ops.size(), threads, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) results[i] = apply(ops[i]);
  });
  return results;
}

std::uint64_t ShardedCpuTable::size() const {
  std::uint64_t n = 0;
  for (const auto& s : shards_) n += s->table.size();
  return n;
}

}  // namespace hb::hash
