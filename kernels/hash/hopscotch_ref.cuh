// The non-owning device view of a GPU hopscotch table (cuCollections' "ref"): copy it
// into any kernel and call its operations per warp. Every lane of a converged warp calls
// with the same arguments and gets the same result; operations of different warps run
// concurrently (lock-free inserts and erases, wait-free finds). GpuHopscotchTable
// (gpu_table.hpp) owns the memory and offers the bulk host API.
#pragma once

#include <cstdint>

#include "kernels/hash/layout.hpp"

namespace hb::hash {

struct HopscotchRef {
  std::uint64_t* slots = nullptr;  // slot_count(capacity) words
  Entry* entries = nullptr;        // slot_count(capacity) payloads
  std::uint32_t capacity = 0;      // homes

#if defined(__CUDACC__)
  __device__ OpResult find(std::uint64_t key) const;
  __device__ OpResult insert(std::uint64_t key, std::uint32_t value) const;
  __device__ OpResult erase(std::uint64_t key) const;
  __device__ OpResult apply(const Op& op) const;
#endif
};

}  // namespace hb::hash

#if defined(__CUDACC__)
#include "kernels/hash/detail/warp_ops.cuh"
#endif
