// Erase contract: erase-only batches are deterministic even with repeated keys (one
// `erased` with the stored value per present key, not_found for the rest); erased keys
// are gone and their slots reusable.
#include "tests/support/hash_tables.hpp"

namespace hb::hash::test {
namespace {

template <class T>
class HashErase : public ::testing::Test {};
TYPED_TEST_SUITE(HashErase, AllTables, TableNames);

TYPED_TEST(HashErase, RepeatedErasesRemoveOnce) {
  HB_MAKE_TABLE(table, 1u << 15);
  const auto keys = distinct_keys(20000, 31);
  const auto present = std::span(keys).first(15000);
  table.run(ops_of(OpKind::insert, present, 1000));
  std::vector<Op> ops;
  for (int copy = 0; copy < 3; ++copy)
    for (std::size_t i = 0; i < keys.size(); i += 2) ops.push_back({keys[i], 0, OpKind::erase});
  std::shuffle(ops.begin(), ops.end(), std::mt19937(4));
  const auto results = table.run(ops);
  std::unordered_map<std::uint64_t, int> erased;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (results[i].status == OpStatus::not_found) continue;
    ASSERT_EQ(results[i].status, OpStatus::erased);
    ++erased[ops[i].key];
  }
  Contents expected;
  for (std::size_t i = 0; i < present.size(); ++i) {
    const int times = erased.count(present[i]) ? erased[present[i]] : 0;
    EXPECT_EQ(times, i % 2 == 0 ? 1 : 0) << "key " << present[i];
    if (i % 2 == 1) expected[present[i]] = static_cast<std::uint32_t>(1000 + i);
  }
  EXPECT_EQ(erased.size(), (present.size() + 1) / 2);
  EXPECT_EQ(table.contents(), expected);
  HB_EXPECT_VALID(table);
}

TYPED_TEST(HashErase, ErasedValueIsTheStoredOneAndSlotsAreReused) {
  HB_MAKE_TABLE(table, 4096);
  const auto keys = distinct_keys(1600, 32);
  for (int round = 0; round < 5; ++round) {
    const auto inserted = table.run(ops_of(OpKind::insert, keys, static_cast<std::uint32_t>(round * 10000)));
    for (const auto& r : inserted) ASSERT_EQ(r.status, OpStatus::inserted);
    const auto erased = table.run(ops_of(OpKind::erase, keys));
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_EQ(erased[i].status, OpStatus::erased);
      ASSERT_EQ(erased[i].value, static_cast<std::uint32_t>(round * 10000 + i));
    }
    EXPECT_TRUE(table.contents().empty());
  }
  HB_EXPECT_VALID(table);
}

}  // namespace
}  // namespace hb::hash::test
