// The hash table contract tests (tests/src/test_hash_*.cpp) run against every table
// through these adapters: the CPU table, the sharded concurrent CPU table and, in CUDA
// builds with a device, the GPU table. HB_HASH_TEST_SMALL=1 shrinks the sizes (the
// device harness runs the GPU tests under compute-sanitizer that way).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <unordered_map>
#include <vector>

#include "src/hash/cpu_table.hpp"
#include "src/hash/sharded_table.hpp"
#include "src/hash/validate.hpp"
#if defined(HB_HAVE_CUDA)
#include "kernels/hash/gpu_table.hpp"
#include "src/backend/backend.hpp"
#endif

namespace hb::hash::test {

inline bool small_mode() {
  const char* s = std::getenv("HB_HASH_TEST_SMALL");
  return s != nullptr && *s != '\0' && *s != '0';
}

using Contents = std::unordered_map<std::uint64_t, std::uint32_t>;

inline Contents contents_of(std::span<const std::uint64_t> slots, std::span<const Entry> entries) {
  Contents c;
  for (std::size_t j = 0; j < slots.size(); ++j)
    if (slot::full(slots[j])) c[entries[j].key] = entries[j].value;
  return c;
}

struct CpuTable {
  static constexpr const char* kName = "cpu";
  static constexpr bool kExactGeometry = true;  // full statuses arise exactly as designed
  static constexpr std::size_t kStressOps = 200'000;
  CpuHopscotchTable table;

  static std::optional<CpuTable> make(std::uint32_t capacity) { return CpuTable{CpuHopscotchTable(capacity)}; }
  std::vector<OpResult> run(std::span<const Op> ops) { return table.run(ops); }
  std::vector<OpResult> insert(std::span<const std::uint64_t> k, std::span<const std::uint32_t> v, GrowPolicy g) {
    return *table.insert(k, v, g);
  }
  Status grow(std::uint32_t capacity) { return table.grow(capacity); }
  std::uint32_t capacity() const { return table.capacity(); }
  TableCheck check() const { return check_table(table.slots(), table.entries(), table.capacity()); }
  Contents contents() const { return contents_of(table.slots(), table.entries()); }
};

// Not exact geometry: keys spread over shards, each a table of its own.
struct ShardedTable {
  static constexpr const char* kName = "sharded";
  static constexpr bool kExactGeometry = false;
  static constexpr std::size_t kStressOps = 200'000;
  std::unique_ptr<ShardedCpuTable> table;

  static std::optional<ShardedTable> make(std::uint32_t capacity) {
    return ShardedTable{std::make_unique<ShardedCpuTable>(capacity, 16)};
  }
  std::vector<OpResult> run(std::span<const Op> ops) { return table->run(ops, 2); }
  TableCheck check() const {
    TableCheck all;
    for (std::size_t i = 0; i < table->shard_count(); ++i) {
      const auto& s = table->shard(i);
      const TableCheck c = check_table(s.slots(), s.entries(), s.capacity());
      all.items += c.items;
      all.locked_slots += c.locked_slots;
      all.bitmap_errors += c.bitmap_errors;
      all.misplaced += c.misplaced;
      all.duplicate_keys += c.duplicate_keys;
      if (all.first_problem.empty()) all.first_problem = c.first_problem;
    }
    return all;
  }
  Contents contents() const {
    Contents all;
    for (std::size_t i = 0; i < table->shard_count(); ++i) {
      const Contents c = contents_of(table->shard(i).slots(), table->shard(i).entries());
      all.insert(c.begin(), c.end());
    }
    return all;
  }
};

#if defined(HB_HAVE_CUDA)
struct GpuTable {
  static constexpr const char* kName = "gpu";
  static constexpr bool kExactGeometry = true;
  static constexpr std::size_t kStressOps = 4'000'000;
  std::unique_ptr<GpuHopscotchTable> table;

  static std::optional<GpuTable> make(std::uint32_t capacity) {
    if (cuda_device_count() == 0) return std::nullopt;
    auto t = GpuHopscotchTable::create(capacity);
    if (!t) ADD_FAILURE() << t.error().line();
    if (!t) return std::nullopt;
    return GpuTable{std::make_unique<GpuHopscotchTable>(std::move(*t))};
  }
  std::vector<OpResult> run(std::span<const Op> ops) { return take(table->run(ops)); }
  std::vector<OpResult> insert(std::span<const std::uint64_t> k, std::span<const std::uint32_t> v, GrowPolicy g) {
    return take(table->insert(k, v, g));
  }
  Status grow(std::uint32_t capacity) { return table->grow(capacity); }
  std::uint32_t capacity() const { return table->capacity(); }
  TableCheck check() const {
    auto s = table->snapshot();
    if (!s) ADD_FAILURE() << s.error().line();
    return s ? check_table(s->slots, s->entries, s->capacity) : TableCheck{};
  }
  Contents contents() const {
    auto s = table->snapshot();
    return s ? contents_of(s->slots, s->entries) : Contents{};
  }

 private:
  static std::vector<OpResult> take(Result<std::vector<OpResult>> r) {
    if (!r) ADD_FAILURE() << r.error().line();
    return r ? std::move(*r) : std::vector<OpResult>{};
  }
};
using AllTables = ::testing::Types<CpuTable, ShardedTable, GpuTable>;
using ExactTables = ::testing::Types<CpuTable, GpuTable>;
#else
using AllTables = ::testing::Types<CpuTable, ShardedTable>;
using ExactTables = ::testing::Types<CpuTable>;
#endif

struct TableNames {
  template <class T>
  static std::string GetName(int) { return T::kName; }
};

// Makes the table or skips the test (no CUDA device).
#define HB_MAKE_TABLE(var, capacity)                                                    \
  auto var##_made = TypeParam::make(capacity);                                          \
  if (!var##_made) GTEST_SKIP() << "no CUDA device: the GPU table runs on the device"; \
  auto& var = *var##_made

// `count` distinct keys from a fixed seed, spread over the whole 64-bit range.
inline std::vector<std::uint64_t> distinct_keys(std::size_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> keys(count);
  for (auto& k : keys) k = rng();
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::shuffle(keys.begin(), keys.end(), rng);
  return keys;
}

// `count` keys whose home in a table of `capacity` homes is `home`.
inline std::vector<std::uint64_t> keys_homed_at(std::uint32_t home, std::uint32_t capacity, std::size_t count) {
  std::vector<std::uint64_t> keys;
  for (std::uint64_t k = 1; keys.size() < count; ++k)
    if (home_of(mix(k), capacity) == home) keys.push_back(k);
  return keys;
}

inline std::vector<Op> ops_of(OpKind kind, std::span<const std::uint64_t> keys, std::uint32_t value_base = 0) {
  std::vector<Op> ops(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) ops[i] = {keys[i], value_base + static_cast<std::uint32_t>(i), kind};
  return ops;
}

#define HB_EXPECT_VALID(table)                                                                      \
  do {                                                                                              \
    const ::hb::hash::TableCheck check_ = (table).check();                                         \
    EXPECT_TRUE(check_.ok()) << check_.first_problem << " (locked " << check_.locked_slots           \
                             << ", bitmap " << check_.bitmap_errors << ", misplaced " << check_.misplaced \
                             << ", duplicates " << check_.duplicate_keys << ")";                    \
  } while (0)

}  // namespace hb::hash::test
