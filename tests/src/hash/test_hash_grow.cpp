// Grow: a rebuild into a larger table keeps every key and value; GrowPolicy::on_full
// turns a batch that would leave keys without a slot into one that stores them all.
#include "tests/support/hash_tables.hpp"

namespace hb::hash::test {
namespace {

template <class T>
class HashGrow : public ::testing::Test {};
TYPED_TEST_SUITE(HashGrow, ExactTables, TableNames);

TYPED_TEST(HashGrow, RebuildKeepsContentsAndFreesTheNeighbourhood) {
  const std::uint32_t capacity = 1024;
  HB_MAKE_TABLE(table, capacity);
  const auto crowded = keys_homed_at(7, capacity, kWindow + 4);
  const auto others = distinct_keys(500, 61);
  table.run(ops_of(OpKind::insert, others, 5000));
  const auto first = table.run(ops_of(OpKind::insert, crowded));
  const auto before = table.contents();
  ASSERT_TRUE(table.grow(64 * capacity).ok());
  EXPECT_EQ(table.capacity(), 64 * capacity);
  EXPECT_EQ(table.contents(), before);
  HB_EXPECT_VALID(table);
  std::vector<std::uint64_t> retry;
  for (std::size_t i = 0; i < crowded.size(); ++i)
    if (is_full_status(first[i].status)) retry.push_back(crowded[i]);
  ASSERT_FALSE(retry.empty());
  for (const auto& r : table.run(ops_of(OpKind::insert, retry))) EXPECT_EQ(r.status, OpStatus::inserted);
}

TYPED_TEST(HashGrow, OnFullPolicyStoresEveryKey) {
  HB_MAKE_TABLE(table, 512);
  const auto keys = distinct_keys(3000, 62);
  std::vector<std::uint32_t> values(keys.size());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint32_t>(3 * i);
  const auto results = table.insert(keys, values, GrowPolicy::on_full);
  ASSERT_EQ(results.size(), keys.size());
  for (const auto& r : results) ASSERT_EQ(r.status, OpStatus::inserted);
  EXPECT_GE(table.capacity(), 3000u);
  const auto found = table.run(ops_of(OpKind::find, keys));
  for (std::size_t i = 0; i < keys.size(); ++i) ASSERT_EQ(found[i].value, 3 * i);
  HB_EXPECT_VALID(table);
}

}  // namespace
}  // namespace hb::hash::test
