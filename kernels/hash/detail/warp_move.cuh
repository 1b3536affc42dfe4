// find_closer_empty: one swap_value_into_empty step of an insert, bringing its locked
// free slot (the target) closer to the insert's home. Included by warp_ops.cuh.
#pragma once

#include "kernels/hash/detail/warp_slots.cuh"

namespace hb::hash {


namespace detail {

inline constexpr std::int64_t kNoMove = -1;     // no item before the target may move into it
inline constexpr std::int64_t kContended = -2;  // movable items exist, their heads are locked now

// Lane 0: with swap_head `head` swap-locked, moves its first item lying before
// `target` into `target` (the temporary duplicate: copy, publish, then clear the
// source) and makes the source the new, multiple-locked target. -1 when every such item
// is locked by someone else (the head's lock is then released).
__device__ __forceinline__ std::int64_t lane0_swap_into(std::uint64_t* slots, Entry* entries, std::uint64_t head,
                                                        std::uint64_t target) {
  const auto reach = static_cast<std::uint32_t>(target - head);
  const std::uint64_t head_word = SlotRef(*reinterpret_cast<unsigned long long*>(slots + head)).load(::cuda::memory_order_relaxed);
  for (std::uint32_t bits = slot::bitmap(head_word) & ((1u << reach) - 1u); bits != 0; bits &= bits - 1) {
    const auto d = static_cast<std::uint32_t>(__ffs(static_cast<int>(bits)) - 1);
    const std::uint64_t from = head + d;
    if (d != 0 && !lane0_try_lock(slots, from, slot::kSwapLock, [](std::uint64_t w) { return slot::full(w); })) continue;
    const std::uint64_t tag =
        slot::tag(SlotRef(*reinterpret_cast<unsigned long long*>(slots + from)).load(::cuda::memory_order_relaxed));
    const ulonglong2 item = __ldcg(reinterpret_cast<const ulonglong2*>(entries + from));
    *reinterpret_cast<ulonglong2*>(entries + target) = item;
    lane0_rewrite_owned(slots, target, [=](std::uint64_t w) { return (w | slot::kFull | tag) & ~slot::kMultipleLock; });
    const std::uint64_t hop = (1ull << reach) | (1ull << d);  // bit `reach` set, bit d cleared
    if (d == 0) {
      lane0_rewrite_owned(slots, head, [=](std::uint64_t w) {  // its item is homed here: all ours
        return ((w & ~(slot::kFull | slot::kTag | slot::kSwapLock)) ^ hop) | slot::kMultipleLock;
      });
    } else {
      lane0_rewrite_owned(slots, from, [](std::uint64_t w) {  // locked by us, item homed at head
        return (w & ~(slot::kFull | slot::kTag | slot::kSwapLock)) | slot::kMultipleLock;
      });
      lane0_update(slots, head, [=](std::uint64_t w) { return (w ^ hop) & ~slot::kSwapLock; });
    }
    return static_cast<std::int64_t>(from);
  }
  lane0_update(slots, head, [](std::uint64_t w) { return w & ~slot::kSwapLock; });
  return -1;
}




}  // namespace detail
}  // namespace hb::hash
