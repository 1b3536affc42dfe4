// Copies from global to shared memory that run while the thread goes on (cp.async,
// sm_80 on): a thread's copies are committed in groups and it waits for its own
// groups; a barrier then shows what they wrote to the other threads.
#pragma once

namespace hb::kernels::async_copy {

// 8 bytes, through the L1 and the L2; zeros where !valid (`from` is not read).
__device__ __forceinline__ void to_shared(double* to, const double* from, bool valid) {
  const auto address = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(address), "l"(from), "r"(valid ? 8 : 0));
}

// 16 bytes (both 16-byte aligned), through the L2 only: rows read once.
__device__ __forceinline__ void to_shared(float* to, const float* from) {
  const auto address = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address), "l"(from));
}

// The copies issued since the last commit form a group.
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Until at most `pending` of this thread's groups are still in flight.
template <int pending>
__device__ __forceinline__ void wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending));
}

}  // namespace hb::kernels::async_copy
