// The hopscotch table's vocabulary, shared by the GPU table (kernels/hash), the CPU
// tables (src/hash) and the validation routine: slot word layout, hashing, operation
// kinds and statuses. Plain C++ that nvcc also compiles for the device.
//
// Widths: keys are 64-bit (every value usable: emptiness is a slot flag, not a reserved
// key); values are 32-bit. A 32-bit key is used zero-extended. See kernels/hash/README.md.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define HB_HASH_HD __host__ __device__ __forceinline__
#else
#define HB_HASH_HD inline
#endif

namespace hb::hash {

// H = 31: a key lives in its home slot or one of the 31 after it, so one warp (lane i
// reads slot home + i) sees a whole neighbourhood in one coalesced load.
inline constexpr std::uint32_t kHop = 31;
inline constexpr std::uint32_t kWindow = kHop + 1;
// An insert looks for an empty slot at most this far past its home; beyond, table_full.
inline constexpr std::uint32_t kMaxProbe = 4096;

enum class OpKind : std::uint8_t { insert = 0, erase = 1, find = 2 };

enum class OpStatus : std::uint8_t {
  inserted = 0,            // insert: the key was absent and is now stored
  exists = 1,              // insert: the key was present; value = the stored value
  found = 2,               // find: value = the stored value
  not_found = 3,           // find or erase: the key is absent
  erased = 4,              // erase: removed; value = the removed value
  full_neighbourhood = 5,  // insert: a free slot exists but none can be moved into reach
  table_full = 6,          // insert: no free slot within kMaxProbe slots of home
};

const char* op_status_name(OpStatus s);

// Bulk inserts on the host API: on_full doubles the table and retries the inserts that
// found no slot (full_neighbourhood, table_full), up to 8 times.
enum class GrowPolicy { never, on_full };

constexpr bool is_full_status(OpStatus s) { return s == OpStatus::full_neighbourhood || s == OpStatus::table_full; }

struct Op {
  std::uint64_t key = 0;
  std::uint32_t value = 0;  // inserts only
  OpKind kind = OpKind::find;
};

struct OpResult {
  std::uint32_t value = 0;
  OpStatus status = OpStatus::not_found;
};

// A slot's payload. Written only while its slot is empty and locked by the writer.
struct alignas(16) Entry {
  std::uint64_t key;
  std::uint32_t value;
  std::uint32_t unused;
};

// The 64-bit slot word:
//   bits  0..31  hop bitmap of this slot as a home: bit d = slot + d holds a key homed here
//   bit  32      multiple_lock (home of an insert/erase in its update, or an insert's target)
//   bit  33      swap_lock (swap_head or swap of a displacement)
//   bit  34      full (the slot holds an item; its key and value are in entries[slot])
//   bits 35..63  tag: the top 29 bits of the item's key hash (filters entry reads)
namespace slot {
inline constexpr std::uint64_t kBitmap = 0xffffffffull;
inline constexpr std::uint64_t kMultipleLock = 1ull << 32;
inline constexpr std::uint64_t kSwapLock = 1ull << 33;
inline constexpr std::uint64_t kLocks = kMultipleLock | kSwapLock;
inline constexpr std::uint64_t kFull = 1ull << 34;
inline constexpr int kTagShift = 35;
inline constexpr std::uint64_t kTag = ~0ull << kTagShift;
HB_HASH_HD std::uint32_t bitmap(std::uint64_t w) { return static_cast<std::uint32_t>(w & kBitmap); }
HB_HASH_HD std::uint64_t tag(std::uint64_t w) { return w & kTag; }
HB_HASH_HD bool full(std::uint64_t w) { return (w & kFull) != 0; }
HB_HASH_HD bool locked(std::uint64_t w) { return (w & kLocks) != 0; }
}  // namespace slot

// murmur3's 64-bit finaliser: a bijection, so distinct keys never share a hash.
HB_HASH_HD std::uint64_t mix(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

// Home slot in [0, capacity) from the hash's low 32 bits (multiply-shift range reduction).
HB_HASH_HD std::uint32_t home_of(std::uint64_t hash, std::uint32_t capacity) {
  return static_cast<std::uint32_t>(((hash & 0xffffffffull) * capacity) >> 32);
}
HB_HASH_HD std::uint64_t tag_of(std::uint64_t hash) { return hash & slot::kTag; }

// Slots a table of `capacity` homes allocates: the last home's neighbourhood never wraps.
HB_HASH_HD std::uint64_t slot_count(std::uint32_t capacity) { return std::uint64_t{capacity} + kHop; }

// Largest capacity (homes) a table supports.
inline constexpr std::uint32_t kMaxCapacity = 0xffffffffu - 2 * kWindow;

}  // namespace hb::hash
