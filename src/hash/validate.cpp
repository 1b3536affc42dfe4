#include "src/hash/validate.hpp"

#include <algorithm>
#include <vector>

#include <fmt/core.h>

namespace hb::hash {
namespace {

void note(TableCheck& c, const std::string& what) {
  if (c.first_problem.empty()) c.first_problem = what;
}

}  // namespace

const char* op_status_name(OpStatus s) {
  switch (s) {
    case OpStatus::inserted: return "inserted";
    case OpStatus::exists: return "exists";
    case OpStatus::found: return "found";
    case OpStatus::not_found: return "not_found";
    case OpStatus::erased: return "erased";
    case OpStatus::full_neighbourhood: return "full_neighbourhood";
    case OpStatus::table_full: return "table_full";
  }
  return "?";
}

TableCheck check_table(std::span<const std::uint64_t> slots, std::span<const Entry> entries, std::uint32_t capacity) {
  TableCheck c;
  const std::uint64_t n = slot_count(capacity);
  if (slots.size() != n || entries.size() != n) {
    c.misplaced = 1;
    note(c, fmt::format("{} slots and {} entries for capacity {} (want {})", slots.size(), entries.size(), capacity, n));
    return c;
  }
  std::vector<std::uint64_t> keys;
  for (std::uint64_t j = 0; j < n; ++j) {
    const std::uint64_t w = slots[j];
    if (slot::locked(w)) {
      ++c.locked_slots;
      note(c, fmt::format("slot {} still carries a lock flag ({:#x})", j, w));
    }
    if (j >= capacity && slot::bitmap(w) != 0) {
      ++c.bitmap_errors;
      note(c, fmt::format("tail slot {} has a hop bitmap", j));
    }
    for (std::uint32_t bits = slot::bitmap(w); bits != 0; bits &= bits - 1) {
      const std::uint64_t at = j + static_cast<std::uint64_t>(__builtin_ctz(bits));
      const bool homed_here = at < n && slot::full(slots[at]) && home_of(mix(entries[at].key), capacity) == j;
      if (!homed_here) {
        ++c.bitmap_errors;
        note(c, fmt::format("slot {}'s hop bit for slot {} names no item homed there", j, at));
      }
    }
    if (!slot::full(w)) continue;
    ++c.items;
    const std::uint64_t hash = mix(entries[j].key);
    const std::uint32_t home = home_of(hash, capacity);
    if (j < home || j - home > kHop || slot::tag(w) != tag_of(hash)) {
      ++c.misplaced;
      note(c, fmt::format("key {:#x} in slot {} is out of its home {}'s reach or mistagged", entries[j].key, j, home));
    } else if ((slot::bitmap(slots[home]) >> (j - home) & 1u) == 0) {
      ++c.bitmap_errors;
      note(c, fmt::format("key {:#x} in slot {} lacks its hop bit in home {}", entries[j].key, j, home));
    }
    keys.push_back(entries[j].key);
  }
  std::sort(keys.begin(), keys.end());
  for (std::size_t i = 1; i < keys.size(); ++i) {
    if (keys[i] != keys[i - 1]) continue;
    ++c.duplicate_keys;
    note(c, fmt::format("key {:#x} is stored twice", keys[i]));
  }
  return c;
}

}  // namespace hb::hash
