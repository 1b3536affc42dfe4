// Checks a hopscotch table's slots at rest (no operation in flight): what the
// concurrency tests assert after every launch, for the GPU table (after copy-back) and
// the CPU tables alike.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "kernels/hash/layout.hpp"

namespace hb::hash {

struct TableCheck {
  std::uint64_t items = 0;           // full slots
  std::uint64_t locked_slots = 0;    // slots with a lock flag left set
  std::uint64_t bitmap_errors = 0;   // hop bits without their item, items without their hop bit
  std::uint64_t misplaced = 0;       // items outside their home's neighbourhood, or with a wrong tag
  std::uint64_t duplicate_keys = 0;  // keys stored more than once
  std::string first_problem;         // a sentence about the first problem seen ("" when ok)

  bool ok() const { return locked_slots + bitmap_errors + misplaced + duplicate_keys == 0; }
};

// `slots` and `entries` hold slot_count(capacity) elements each.
TableCheck check_table(std::span<const std::uint64_t> slots, std::span<const Entry> entries, std::uint32_t capacity);

}  // namespace hb::hash
