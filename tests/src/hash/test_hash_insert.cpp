// Insert contract of every hopscotch table: insert-only batches (deterministic even with
// repeated keys: one `inserted` per key, `exists` with the stored value for the rest),
// full neighbourhood and full table as statuses, a build at load 0.8.
#include "tests/support/hash_tables.hpp"

namespace hb::hash::test {
namespace {

template <class T>
class HashInsert : public ::testing::Test {};
TYPED_TEST_SUITE(HashInsert, AllTables, TableNames);
template <class T>
class HashInsertExact : public ::testing::Test {};
TYPED_TEST_SUITE(HashInsertExact, ExactTables, TableNames);

TYPED_TEST(HashInsert, RepeatedKeysInsertOnceAndReportTheStoredValue) {
  HB_MAKE_TABLE(table, 1u << 16);
  const auto keys = distinct_keys(5000, 11);
  std::vector<Op> ops;
  for (int copy = 0; copy < 4; ++copy)
    for (std::size_t i = 0; i < keys.size(); ++i)
      ops.push_back({keys[i], static_cast<std::uint32_t>(copy * 100000 + i), OpKind::insert});
  std::shuffle(ops.begin(), ops.end(), std::mt19937(3));
  const auto results = table.run(ops);
  ASSERT_EQ(results.size(), ops.size());
  Contents inserted;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (results[i].status == OpStatus::inserted) { EXPECT_TRUE(inserted.emplace(ops[i].key, ops[i].value).second); }
  ASSERT_EQ(inserted.size(), keys.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (results[i].status == OpStatus::inserted) continue;
    ASSERT_EQ(results[i].status, OpStatus::exists) << op_status_name(results[i].status);
    EXPECT_EQ(results[i].value, inserted.at(ops[i].key));
  }
  EXPECT_EQ(table.contents(), inserted);
  HB_EXPECT_VALID(table);
}

TYPED_TEST(HashInsert, BuildAtLoadPointEightLosesNoKey) {
  const std::uint32_t capacity = small_mode() ? 4096 : TypeParam::kStressOps >= 1000000 ? (1u << 22) : (1u << 17);
  HB_MAKE_TABLE(table, capacity);
  const auto keys = distinct_keys(capacity * 8 / 10, 12);
  const auto results = table.run(ops_of(OpKind::insert, keys));
  Contents expected;
  std::size_t full = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (results[i].status == OpStatus::inserted) expected[keys[i]] = static_cast<std::uint32_t>(i);
    else { ASSERT_TRUE(is_full_status(results[i].status)) << op_status_name(results[i].status); }
    full += results[i].status != OpStatus::inserted;
  }
  EXPECT_LT(full, keys.size() / 1000 + 1) << "inserts without a slot at load 0.8";
  EXPECT_EQ(table.contents(), expected);  // a key is stored iff its insert said so
  HB_EXPECT_VALID(table);
  const auto found = table.run(ops_of(OpKind::find, keys));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const bool stored = results[i].status == OpStatus::inserted;
    ASSERT_EQ(found[i].status, stored ? OpStatus::found : OpStatus::not_found);
    if (stored) { ASSERT_EQ(found[i].value, static_cast<std::uint32_t>(i)); }
  }
}

// 32 keys with one home fill its neighbourhood; a 33rd finds a free slot beyond it that
// no displacement can bring into reach (every item in between belongs to that home).
TYPED_TEST(HashInsertExact, FullNeighbourhoodIsAStatusNotALostKey) {
  const std::uint32_t capacity = 1024;
  HB_MAKE_TABLE(table, capacity);
  const auto keys = keys_homed_at(100, capacity, kWindow + 3);
  const auto results = table.run(ops_of(OpKind::insert, keys));
  int inserted = 0;
  for (const auto& r : results) {
    inserted += r.status == OpStatus::inserted;
    if (r.status != OpStatus::inserted) { EXPECT_EQ(r.status, OpStatus::full_neighbourhood) << op_status_name(r.status); }
  }
  EXPECT_EQ(inserted, static_cast<int>(kWindow));
  const auto found = table.run(ops_of(OpKind::find, keys));
  for (std::size_t i = 0; i < keys.size(); ++i)
    EXPECT_EQ(found[i].status == OpStatus::found, results[i].status == OpStatus::inserted);
  HB_EXPECT_VALID(table);
}

// Keys homed at the last home can only use the 32 slots up to the array's end.
TYPED_TEST(HashInsertExact, FullTableIsAStatusNotALostKey) {
  const std::uint32_t capacity = 256;
  HB_MAKE_TABLE(table, capacity);
  const auto keys = keys_homed_at(capacity - 1, capacity, kWindow + 2);
  const auto results = table.run(ops_of(OpKind::insert, std::span(keys).first(kWindow)));
  for (const auto& r : results) ASSERT_EQ(r.status, OpStatus::inserted);
  const auto extra = table.run(ops_of(OpKind::insert, std::span(keys).subspan(kWindow)));
  for (const auto& r : extra) EXPECT_EQ(r.status, OpStatus::table_full) << op_status_name(r.status);
  EXPECT_EQ(table.contents().size(), kWindow);
  HB_EXPECT_VALID(table);
}

}  // namespace
}  // namespace hb::hash::test
