// The warp operations of HopscotchRef: the GLHT paper's
// (Zhang and Sun 2019) find, erase (find, update) and insert
// (find, find_empty, find_closer_empty as repeated swap_value_into_empty, update).
// Included by hopscotch_ref.cuh only.
#pragma once

#include "kernels/hash/detail/warp_move.cuh"
#include "kernels/hash/detail/warp_slots.cuh"

namespace hb::hash {
namespace detail {

struct Probe {
  std::uint32_t home;
  std::uint64_t tag;
};

__device__ __forceinline__ Probe probe_of(std::uint64_t key, std::uint32_t capacity) {
  const std::uint64_t h = mix(key);
  return {home_of(h, capacity), tag_of(h)};
}

__device__ __forceinline__ void unlock(std::uint64_t* slots, std::uint64_t i, std::uint64_t lock) {
  update_slot(slots, i, [=](std::uint64_t w) { return w & ~lock; });
}

// find_closer_empty: the warp reads the H slots before the target at once (lane i: head
// target - H + i); unlocked heads with an item in reach are tried from target - H on.
__device__ __forceinline__ std::int64_t move_closer(const HopscotchRef& t, std::uint64_t target) {
  const std::uint64_t first = target - kHop;
  const std::uint64_t w = load_window(t.slots, first, target);  // lane 31 (the target) is excluded
  const unsigned reach = kHop - lane_id();
  const bool movable = lane_id() < kHop && (slot::bitmap(w) & ((1u << reach) - 1u)) != 0;
  if (__ballot_sync(kAllLanes, movable) == 0) return kNoMove;
  std::int64_t moved = kContended;
  unsigned heads = __ballot_sync(kAllLanes, movable && !slot::locked(w));
  if (lane_id() == 0) {
    for (; heads != 0 && moved == kContended; heads &= heads - 1) {
      const std::uint64_t head = first + static_cast<unsigned>(__ffs(static_cast<int>(heads)) - 1);
      const std::uint32_t mask = (1u << (target - head)) - 1u;
      if (!lane0_try_lock(t.slots, head, slot::kSwapLock, [=](std::uint64_t x) { return (slot::bitmap(x) & mask) != 0; }))
        continue;
      const std::int64_t from = lane0_swap_into(t.slots, t.entries, head, target);
      if (from >= 0) moved = from;
    }
  }
  moved = __shfl_sync(kAllLanes, moved, 0);
  __syncwarp();
  return moved;
}

// find_empty: the nearest free, unlocked slot at or after the home, locked as the
// target; -1 when none lies within kMaxProbe (table_full). `w` is the home's window.
__device__ __forceinline__ std::int64_t lock_nearest_empty(const HopscotchRef& t, std::uint32_t home, std::uint64_t w) {
  if (!slot::full(__shfl_sync(kAllLanes, w, 0))) return home;  // the home itself: already ours
  const std::uint64_t end = std::min<std::uint64_t>(slot_count(t.capacity), std::uint64_t{home} + kMaxProbe);
  for (std::uint64_t first = home; first < end; first += kWindow) {
    const std::uint64_t ww = first == home ? w : load_window(t.slots, first, end);
    for (unsigned empties = __ballot_sync(kAllLanes, !slot::full(ww) && !slot::locked(ww)); empties != 0;
         empties &= empties - 1) {
      const std::uint64_t e = first + static_cast<unsigned>(__ffs(empties) - 1);
      if (try_lock(t.slots, e, slot::kMultipleLock, [](std::uint64_t x) { return !slot::full(x); }))
        return static_cast<std::int64_t>(e);
    }
  }
  return -1;
}

// Insert with the home locked and the key known absent. Returns false when it gave up
// its locks under contention (the caller starts over).
__device__ __forceinline__ bool place(const HopscotchRef& t, const Probe& p, std::uint64_t key, std::uint32_t value,
                                      std::uint64_t w, OpResult* r) {
  const std::int64_t found = lock_nearest_empty(t, p.home, w);
  if (found < 0) {
    unlock(t.slots, p.home, slot::kMultipleLock);
    *r = {0, OpStatus::table_full};
    return true;
  }
  auto target = static_cast<std::uint64_t>(found);
  unsigned ns = 64;
  for (int contended = 0; target - p.home > kHop;) {
    const std::int64_t closer = move_closer(t, target);
    if (closer >= 0) {
      target = static_cast<std::uint64_t>(closer);
      continue;
    }
    if (closer == kNoMove || ++contended > 32) {
      unlock(t.slots, target, slot::kMultipleLock);
      unlock(t.slots, p.home, slot::kMultipleLock);
      *r = {0, OpStatus::full_neighbourhood};
      return closer == kNoMove;
    }
    back_off(ns);
  }
  // update: the payload first, then the full flag (release), then the hop bit.
  const std::uint64_t bit = 1ull << (target - p.home);
  if (lane_id() == 0) t.entries[target] = Entry{key, value, 0};
  // The target was free and is locked by us: nobody else may change its word. The home
  // (when it is not the target) may hold someone else's item: a CAS keeps their change.
  const std::uint64_t home_bit = target == p.home ? bit : 0;
  if (lane_id() == 0)
    lane0_rewrite_owned(t.slots, target, [=](std::uint64_t x) { return (x | slot::kFull | p.tag | home_bit) & ~slot::kMultipleLock; });
  if (target != p.home) update_slot(t.slots, p.home, [=](std::uint64_t x) { return (x | bit) & ~slot::kMultipleLock; });
  __syncwarp();
  *r = {value, OpStatus::inserted};
  return true;
}

}  // namespace detail

// Re-reads while the home holds multiple_lock (an update of a key homed here is half
// done). A miss while the home holds swap_lock (one of its keys is moving: the copy may
// have landed after this lane's load of its new slot) is confirmed by one more read.
__device__ inline OpResult HopscotchRef::find(std::uint64_t key) const {
  using namespace detail;
  const Probe p = probe_of(key, capacity);
  unsigned ns = 32;
  for (bool confirmed = false;;) {
    const std::uint64_t w = load_slot(slots, std::uint64_t{p.home} + lane_id());
    const std::uint64_t home_word = __shfl_sync(kAllLanes, w, 0);
    if (home_word & slot::kMultipleLock) {
      back_off(ns);
      continue;
    }
    std::uint32_t value = 0;
    if (match_lane(w, slots, p.home, entries, key, p.tag, &value) >= 0) return {value, OpStatus::found};
    if (confirmed || !(home_word & slot::kSwapLock)) return {0, OpStatus::not_found};
    confirmed = true;
  }
}

__device__ inline OpResult HopscotchRef::erase(std::uint64_t key) const {
  using namespace detail;
  const Probe p = probe_of(key, capacity);
  unsigned ns = 32;
  for (;;) {
    std::uint64_t w = load_slot(slots, std::uint64_t{p.home} + lane_id());
    std::uint32_t value = 0;
    if (slot::locked(__shfl_sync(kAllLanes, w, 0))) {
      back_off(ns);
      continue;
    }
    if (match_lane(w, slots, p.home, entries, key, p.tag, &value) < 0) return {0, OpStatus::not_found};
    if (!try_lock(slots, p.home, slot::kMultipleLock, [](std::uint64_t) { return true; })) {
      back_off(ns);
      continue;
    }
    // With the home locked no other warp touches its keys: this read is authoritative.
    w = load_slot(slots, std::uint64_t{p.home} + lane_id());
    const int lane = match_lane(w, slots, p.home, entries, key, p.tag, &value);
    if (lane < 0) {
      unlock(slots, p.home, slot::kMultipleLock);
      return {0, OpStatus::not_found};
    }
    const std::uint64_t bit = 1ull << lane;
    if (lane != 0) update_slot(slots, p.home + static_cast<std::uint64_t>(lane), [](std::uint64_t x) { return x & ~(slot::kFull | slot::kTag); });
    const std::uint64_t clear_home = lane == 0 ? (slot::kFull | slot::kTag) : 0;
    update_slot(slots, p.home, [=](std::uint64_t x) { return x & ~(clear_home | bit | slot::kMultipleLock); });
    return {value, OpStatus::erased};
  }
}

__device__ inline OpResult HopscotchRef::insert(std::uint64_t key, std::uint32_t value) const {
  using namespace detail;
  const Probe p = probe_of(key, capacity);
  unsigned ns = 32;
  for (;;) {
    std::uint64_t w = load_slot(slots, std::uint64_t{p.home} + lane_id());
    std::uint32_t stored = 0;
    if (slot::locked(__shfl_sync(kAllLanes, w, 0))) {
      back_off(ns);
      continue;
    }
    if (match_lane(w, slots, p.home, entries, key, p.tag, &stored) >= 0) return {stored, OpStatus::exists};
    if (!try_lock(slots, p.home, slot::kMultipleLock, [](std::uint64_t) { return true; })) {
      back_off(ns);
      continue;
    }
    w = load_slot(slots, std::uint64_t{p.home} + lane_id());
    if (match_lane(w, slots, p.home, entries, key, p.tag, &stored) >= 0) {
      unlock(slots, p.home, slot::kMultipleLock);
      return {stored, OpStatus::exists};
    }
    OpResult r;
    if (place(*this, p, key, value, w, &r)) return r;
    back_off(ns);
  }
}

__device__ inline OpResult HopscotchRef::apply(const Op& op) const {
  switch (op.kind) {
    case OpKind::insert: return insert(op.key, op.value);
    case OpKind::erase: return erase(op.key);
    default: return find(op.key);
  }
}

}  // namespace hb::hash
