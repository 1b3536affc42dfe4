#include "src/hash/cpu_table.hpp"

#include <algorithm>

#include <fmt/core.h>

namespace hb::hash {

CpuHopscotchTable::CpuHopscotchTable(std::uint32_t capacity)
    : capacity_(std::clamp<std::uint32_t>(capacity, 1, kMaxCapacity)),
      slots_(slot_count(capacity_), 0),
      entries_(slot_count(capacity_), Entry{0, 0, 0}) {}

std::int64_t CpuHopscotchTable::locate(std::uint64_t key, std::uint32_t home, std::uint64_t tag) const {
  for (std::uint32_t bits = slot::bitmap(slots_[home]); bits != 0; bits &= bits - 1) {
    const std::uint64_t at = home + static_cast<std::uint64_t>(__builtin_ctz(bits));
    if (slot::tag(slots_[at]) == tag && entries_[at].key == key) return static_cast<std::int64_t>(at);
  }
  return -1;
}

OpResult CpuHopscotchTable::find(std::uint64_t key) const {
  const std::uint64_t hash = mix(key);
  const std::int64_t at = locate(key, home_of(hash, capacity_), tag_of(hash));
  if (at < 0) return {0, OpStatus::not_found};
  return {entries_[static_cast<std::size_t>(at)].value, OpStatus::found};
}

std::int64_t CpuHopscotchTable::move_closer(std::uint64_t empty) {
  // As the GLHT paper's (Zhang and Sun 2019) find_closer_empty: swap_head runs from empty - H towards empty; the
  // first item homed at swap_head that lies before `empty` moves into it.
  for (std::uint64_t head = empty - kHop; head < empty; ++head) {
    const std::uint32_t reach = static_cast<std::uint32_t>(empty - head);  // bits 0..reach-1
    const std::uint32_t movable = slot::bitmap(slots_[head]) & ((1u << reach) - 1u);
    if (movable == 0) continue;
    const auto d = static_cast<std::uint32_t>(__builtin_ctz(movable));
    const std::uint64_t from = head + d;
    entries_[empty] = entries_[from];
    slots_[empty] |= slot::kFull | slot::tag(slots_[from]);
    slots_[from] &= ~(slot::kFull | slot::kTag);
    slots_[head] = (slots_[head] | (1ull << reach)) & ~(1ull << d);
    return static_cast<std::int64_t>(from);
  }
  return -1;
}

OpResult CpuHopscotchTable::insert(std::uint64_t key, std::uint32_t value) {
  const std::uint64_t hash = mix(key);
  const std::uint32_t home = home_of(hash, capacity_);
  const std::int64_t at = locate(key, home, tag_of(hash));
  if (at >= 0) return {entries_[static_cast<std::size_t>(at)].value, OpStatus::exists};
  const std::uint64_t end = std::min<std::uint64_t>(slots_.size(), std::uint64_t{home} + kMaxProbe);
  std::uint64_t empty = home;
  while (empty < end && slot::full(slots_[empty])) ++empty;
  if (empty == end) return {0, OpStatus::table_full};
  while (empty - home > kHop) {
    const std::int64_t closer = move_closer(empty);
    if (closer < 0) return {0, OpStatus::full_neighbourhood};
    empty = static_cast<std::uint64_t>(closer);
  }
  entries_[empty] = Entry{key, value, 0};
  slots_[empty] |= slot::kFull | tag_of(hash);
  slots_[home] |= 1ull << (empty - home);
  ++size_;
  return {value, OpStatus::inserted};
}

OpResult CpuHopscotchTable::erase(std::uint64_t key) {
  const std::uint64_t hash = mix(key);
  const std::uint32_t home = home_of(hash, capacity_);
  const std::int64_t at = locate(key, home, tag_of(hash));
  if (at < 0) return {0, OpStatus::not_found};
  const auto j = static_cast<std::size_t>(at);
  slots_[j] &= ~(slot::kFull | slot::kTag);
  slots_[home] &= ~(1ull << (j - home));
  --size_;
  return {entries_[j].value, OpStatus::erased};
}

OpResult CpuHopscotchTable::apply(const Op& op) {
  switch (op.kind) {
    case OpKind::insert: return insert(op.key, op.value);
    case OpKind::erase: return erase(op.key);
    case OpKind::find: return find(op.key);
  }
  return {};
}

std::vector<OpResult> CpuHopscotchTable::run(std::span<const Op> ops) {
  std::vector<OpResult> results(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) results[i] = apply(ops[i]);
  return results;
}

Result<std::vector<OpResult>> CpuHopscotchTable::insert(std::span<const std::uint64_t> keys,
                                                        std::span<const std::uint32_t> values, GrowPolicy grow_policy) {
  if (values.size() != keys.size()) return Error{ErrorKind::internal, {}, "values", "one value per key"};
  std::vector<OpResult> results(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    results[i] = insert(keys[i], values[i]);
    for (int round = 0; round < 8 && grow_policy == GrowPolicy::on_full && is_full_status(results[i].status); ++round) {
      HB_TRY(grow(static_cast<std::uint32_t>(std::min<std::uint64_t>(kMaxCapacity, std::uint64_t{capacity_} * 2))));
      results[i] = insert(keys[i], values[i]);
    }
  }
  return results;
}

Status CpuHopscotchTable::grow(std::uint32_t capacity) {
  CpuHopscotchTable bigger(capacity);
  for (std::size_t j = 0; j < slots_.size(); ++j) {
    if (!slot::full(slots_[j])) continue;
    const OpStatus s = bigger.insert(entries_[j].key, entries_[j].value).status;
    if (s != OpStatus::inserted)
      return Error{ErrorKind::resource, {}, "capacity",
                   fmt::format("rebuilding {} keys into {} slots: {}", size_, capacity, op_status_name(s))};
  }
  *this = std::move(bigger);
  return {};
}

}  // namespace hb::hash
