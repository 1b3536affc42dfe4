// Find contract: hits return the stored value, misses not_found, on every table; finds
// of present keys stay exact while a concurrent batch churns other keys of the same homes.
#include "tests/support/hash_tables.hpp"

namespace hb::hash::test {
namespace {

template <class T>
class HashFind : public ::testing::Test {};
TYPED_TEST_SUITE(HashFind, AllTables, TableNames);

TYPED_TEST(HashFind, HitsReturnValuesMissesAreNotFound) {
  HB_MAKE_TABLE(table, 1u << 14);
  const auto keys = distinct_keys(12000, 21);
  const auto present = std::span(keys).first(6000);
  const auto absent = std::span(keys).subspan(6000);
  table.run(ops_of(OpKind::insert, present, 7));
  const auto hits = table.run(ops_of(OpKind::find, present));
  const auto misses = table.run(ops_of(OpKind::find, absent));
  for (std::size_t i = 0; i < present.size(); ++i) {
    ASSERT_EQ(hits[i].status, OpStatus::found);
    ASSERT_EQ(hits[i].value, 7 + i);
  }
  for (const auto& r : misses) ASSERT_EQ(r.status, OpStatus::not_found);
  HB_EXPECT_VALID(table);
}

// Stable keys must be found by every find while inserts and erases of other keys move
// items around them (displacements, temporary duplicates) in the same launch.
TYPED_TEST(HashFind, StableKeysAreAlwaysFoundDuringChurn) {
  const std::uint32_t capacity = small_mode() ? 8192 : (1u << 18);
  HB_MAKE_TABLE(table, capacity);
  const auto keys = distinct_keys(capacity, 22);
  const auto stable = std::span(keys).first(capacity / 2);
  const auto churn = std::span(keys).subspan(capacity / 2, capacity * 3 / 10);
  table.run(ops_of(OpKind::insert, stable));
  std::vector<Op> ops;
  std::mt19937_64 rng(5);
  const std::size_t n = small_mode() ? 20000 : TypeParam::kStressOps;
  for (std::size_t i = 0; i < n; ++i) {
    const auto pick = rng();
    if (pick % 2 == 0) ops.push_back({stable[pick / 2 % stable.size()], 0, OpKind::find});
    else ops.push_back({churn[pick / 4 % churn.size()], 1, pick / 2 % 2 ? OpKind::insert : OpKind::erase});
  }
  const auto results = table.run(ops);
  Contents index;
  for (std::size_t i = 0; i < stable.size(); ++i) index[stable[i]] = static_cast<std::uint32_t>(i);
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != OpKind::find) continue;
    ASSERT_EQ(results[i].status, OpStatus::found) << "stable key " << ops[i].key << " missed";
    ASSERT_EQ(results[i].value, index.at(ops[i].key));
  }
  HB_EXPECT_VALID(table);
}

}  // namespace
}  // namespace hb::hash::test
