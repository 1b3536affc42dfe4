// Per-warp primitives of the GPU hopscotch table: coherent slot loads, lock and CAS
// loops (run by lane 0 and broadcast), and the neighbourhood probe shared by find,
// insert and erase. Memory ordering: see kernels/hash/README.md.
#pragma once

#include <cuda/atomic>

#include <cstdint>

#include "kernels/hash/layout.hpp"

namespace hb::hash::detail {

inline constexpr unsigned kAllLanes = 0xffffffffu;
using SlotRef = ::cuda::atomic_ref<unsigned long long, ::cuda::thread_scope_device>;

__device__ __forceinline__ unsigned lane_id() { return threadIdx.x & 31u; }

// ld.relaxed.gpu: served by L2, never a stale L1 line while other warps write.
__device__ __forceinline__ std::uint64_t load_slot(std::uint64_t* slots, std::uint64_t i) {
  return SlotRef(*reinterpret_cast<unsigned long long*>(slots + i)).load(::cuda::memory_order_relaxed);
}

// Lane i's word of the window starting at `first`; lanes past `end` see a full, locked
// slot (never a candidate for anything).
__device__ __forceinline__ std::uint64_t load_window(std::uint64_t* slots, std::uint64_t first, std::uint64_t end) {
  const std::uint64_t i = first + lane_id();
  return i < end ? load_slot(slots, i) : (slot::kFull | slot::kLocks);
}

__device__ __forceinline__ void acquire_fence() {
  ::cuda::atomic_thread_fence(::cuda::memory_order_acquire, ::cuda::thread_scope_device);
}

// Lane 0 only: applies `change` to slot i in a CAS loop while `allowed(word)` holds;
// true when applied. acq_rel: the holder of a lock sees what the previous holder wrote,
// and what it wrote before releasing is seen by the next.
template <class Allowed, class Change>
__device__ __forceinline__ bool lane0_update_if(std::uint64_t* slots, std::uint64_t i, Allowed allowed, Change change) {
  SlotRef ref(*reinterpret_cast<unsigned long long*>(slots + i));
  unsigned long long old = ref.load(::cuda::memory_order_relaxed);
  while (allowed(static_cast<std::uint64_t>(old))) {
    const auto desired = static_cast<unsigned long long>(change(static_cast<std::uint64_t>(old)));
    if (ref.compare_exchange_weak(old, desired, ::cuda::memory_order_acq_rel, ::cuda::memory_order_relaxed)) return true;
  }
  return false;
}

template <class Change>
__device__ __forceinline__ void lane0_update(std::uint64_t* slots, std::uint64_t i, Change change) {
  lane0_update_if(slots, i, [](std::uint64_t) { return true; }, change);
}

// Lane 0 only: rewrites a word no other warp may change meanwhile (a free slot locked as
// a target, or a slot whose every field the caller owns: README, "who may change what")
// with a release store instead of an atomic read-modify-write.
template <class Change>
__device__ __forceinline__ void lane0_rewrite_owned(std::uint64_t* slots, std::uint64_t i, Change change) {
  SlotRef ref(*reinterpret_cast<unsigned long long*>(slots + i));
  const auto w = static_cast<std::uint64_t>(ref.load(::cuda::memory_order_relaxed));
  ref.store(static_cast<unsigned long long>(change(w)), ::cuda::memory_order_release);
}

template <class Allowed>
__device__ __forceinline__ bool lane0_try_lock(std::uint64_t* slots, std::uint64_t i, std::uint64_t lock,
                                               Allowed allowed) {
  return lane0_update_if(
      slots, i, [&](std::uint64_t w) { return !slot::locked(w) && allowed(w); },
      [&](std::uint64_t w) { return w | lock; });
}

// Warp-wide forms: lane 0 acts, every lane learns the outcome; __syncwarp orders the
// other lanes' later loads after lane 0's acquire.
template <class Allowed, class Change>
__device__ __forceinline__ bool update_slot_if(std::uint64_t* slots, std::uint64_t i, Allowed allowed, Change change) {
  int done = 0;
  if (lane_id() == 0) done = lane0_update_if(slots, i, allowed, change) ? 1 : 0;
  done = __shfl_sync(kAllLanes, done, 0);
  __syncwarp();
  return done != 0;
}

// Changes only the fields the caller owns (see README: ownership of slot fields).
template <class Change>
__device__ __forceinline__ void update_slot(std::uint64_t* slots, std::uint64_t i, Change change) {
  update_slot_if(slots, i, [](std::uint64_t) { return true; }, change);
}

// Sets `lock` on slot i if it carries no lock and `allowed` holds.
template <class Allowed>
__device__ __forceinline__ bool try_lock(std::uint64_t* slots, std::uint64_t i, std::uint64_t lock, Allowed allowed) {
  return update_slot_if(
      slots, i, [&](std::uint64_t w) { return !slot::locked(w) && allowed(w); },
      [&](std::uint64_t w) { return w | lock; });
}

// Lane whose slot (window word w of the in-range window at `first`) holds `key`, or -1.
// Candidates are full slots with the key's tag; only they read their entry (one 16-byte
// load). The entry was written before its slot's full flag was released, so a candidate
// acquires (HB_HASH_FIND_ACQUIRE 1: an acquire re-load of its own slot word; 0: a fence)
// before reading it.
#ifndef HB_HASH_FIND_ACQUIRE
#define HB_HASH_FIND_ACQUIRE 1
#endif
__device__ __forceinline__ int match_lane(std::uint64_t w, std::uint64_t* slots, std::uint64_t first,
                                          const Entry* entries, std::uint64_t key, std::uint64_t tag,
                                          std::uint32_t* value) {
  bool candidate = slot::full(w) && slot::tag(w) == tag;
  if (__ballot_sync(kAllLanes, candidate) == 0) return -1;
#if HB_HASH_FIND_ACQUIRE == 0
  acquire_fence();
#endif
  bool hit = false;
  std::uint32_t v = 0;
  if (candidate) {
#if HB_HASH_FIND_ACQUIRE == 1
    const std::uint64_t again =
        SlotRef(*reinterpret_cast<unsigned long long*>(slots + first + lane_id())).load(::cuda::memory_order_acquire);
    candidate = slot::full(again) && slot::tag(again) == tag;
#endif
  }
  if (candidate) {
    const ulonglong2 e = __ldcg(reinterpret_cast<const ulonglong2*>(entries + first + lane_id()));
    hit = e.x == key;
    v = static_cast<std::uint32_t>(e.y);
  }
  const unsigned hits = __ballot_sync(kAllLanes, hit);
  if (hits == 0) return -1;
  const int lane = __ffs(static_cast<int>(hits)) - 1;
  *value = __shfl_sync(kAllLanes, v, lane);
  return lane;
}

__device__ __forceinline__ void back_off(unsigned& ns) {
  __nanosleep(ns);
  ns = ns < 1024 ? ns * 2 : ns;
}

}  // namespace hb::hash::detail
