// Mixed batches (insert, erase, find in one launch).
// Deterministic batches - at most one operation per key - must equal a sequential model
// (std::unordered_map) op by op and in final contents. Batches with many operations per
// key are nondeterministic in which op wins, but conserve keys: per key, inserted minus
// erased equals the change in presence, and a present key holds a value one of its
// successful inserts wrote; locks clear, hop bitmaps agree, no key twice.
#include "tests/support/hash_tables.hpp"

namespace hb::hash::test {
namespace {

template <class T>
class HashMixed : public ::testing::Test {};
TYPED_TEST_SUITE(HashMixed, AllTables, TableNames);

OpResult model_apply(Contents& model, const Op& op) {
  const auto it = model.find(op.key);
  switch (op.kind) {
    case OpKind::insert:
      if (it != model.end()) return {it->second, OpStatus::exists};
      model[op.key] = op.value;
      return {op.value, OpStatus::inserted};
    case OpKind::erase: {
      if (it == model.end()) return {0, OpStatus::not_found};
      const std::uint32_t v = it->second;
      model.erase(it);
      return {v, OpStatus::erased};
    }
    case OpKind::find:
      return it == model.end() ? OpResult{0, OpStatus::not_found} : OpResult{it->second, OpStatus::found};
  }
  return {};
}

TYPED_TEST(HashMixed, OneOpPerKeyBatchesEqualTheSequentialModel) {
  HB_MAKE_TABLE(table, 1u << 15);
  const auto universe = distinct_keys(20000, 41);
  std::mt19937_64 rng(6);
  Contents model;
  for (int batch = 0; batch < 8; ++batch) {
    auto keys = universe;
    std::shuffle(keys.begin(), keys.end(), rng);
    keys.resize(8000);
    std::vector<Op> ops;
    for (std::size_t i = 0; i < keys.size(); ++i)
      ops.push_back({keys[i], static_cast<std::uint32_t>(batch * 100000 + i), static_cast<OpKind>(rng() % 3)});
    const auto results = table.run(ops);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const OpResult want = model_apply(model, ops[i]);
      ASSERT_EQ(results[i].status, want.status) << "batch " << batch << " op " << i;
      if (want.status != OpStatus::not_found) { ASSERT_EQ(results[i].value, want.value) << "batch " << batch << " op " << i; }
    }
    ASSERT_EQ(table.contents(), model) << "after batch " << batch;
  }
  HB_EXPECT_VALID(table);
}

// Millions of operations on the GPU (fewer on the CPU tables) over a hot key range and a
// wide one, in single batches.
void stress(auto& table, std::size_t key_range, std::size_t n, std::uint64_t seed) {
  const auto keys = distinct_keys(key_range, seed);
  const auto before = table.contents();
  std::mt19937_64 rng(seed);
  std::vector<Op> ops(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = rng();
    ops[i] = {keys[r % keys.size()], static_cast<std::uint32_t>(i), static_cast<OpKind>((r >> 40) % 3)};
  }
  const auto results = table.run(ops);
  ASSERT_EQ(results.size(), n);
  std::unordered_map<std::uint64_t, long> balance;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> written;
  for (std::size_t i = 0; i < n; ++i) {
    const OpStatus s = results[i].status;
    ASSERT_FALSE(is_full_status(s)) << "no slot at load <= 0.5";
    if (s == OpStatus::inserted) {
      ++balance[ops[i].key];
      written[ops[i].key].push_back(ops[i].value);
    }
    if (s == OpStatus::erased) --balance[ops[i].key];
  }
  const auto after = table.contents();
  for (const std::uint64_t k : keys) {
    const long was = before.count(k), is = after.count(k);
    ASSERT_EQ(is - was, balance[k]) << "key " << k << " lost or duplicated";
    if (is && !written[k].empty()) {
      const auto& w = written[k];
      ASSERT_NE(std::find(w.begin(), w.end(), after.at(k)), w.end()) << "key " << k << " holds a value never written";
    }
  }
  HB_EXPECT_VALID(table);
}

TYPED_TEST(HashMixed, HotKeysConserveUnderContention) {
  HB_MAKE_TABLE(table, 1u << 12);
  stress(table, 1000, small_mode() ? 20000 : TypeParam::kStressOps, 51);
}

TYPED_TEST(HashMixed, WideKeysConserveAtHalfLoad) {
  const std::size_t n = small_mode() ? 20000 : TypeParam::kStressOps;
  HB_MAKE_TABLE(table, static_cast<std::uint32_t>(n));
  stress(table, n / 2, n, 52);
}

}  // namespace
}  // namespace hb::hash::test
