// The static benchmark's GPU baseline: the simplest linear-probing table, one thread per
// operation, 64-bit keys (all ones = empty) with 32-bit values in parallel arrays, the
// same hash and slot count as the hopscotch table. Insert and find only (no erase).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/hash/layout.hpp"

namespace hb::bench {

inline constexpr std::uint64_t kLinearEmpty = ~0ull;

struct LinearProbingRef {
  unsigned long long* keys;
  std::uint32_t* values;
  std::uint64_t slots;
  std::uint32_t capacity;  // homes, as the hopscotch table's: the same spread of keys
};

__global__ void linear_insert(LinearProbingRef t, const std::uint64_t* keys, std::size_t n) {
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    const unsigned long long key = keys[i];
    std::uint64_t at = hash::home_of(hash::mix(key), t.capacity);
    for (std::uint64_t probes = 0; probes < t.slots; ++probes, at = at + 1 == t.slots ? 0 : at + 1) {
      const unsigned long long old = atomicCAS(t.keys + at, kLinearEmpty, key);
      if (old == kLinearEmpty || old == key) {
        t.values[at] = static_cast<std::uint32_t>(i);
        break;
      }
    }
  }
}

__global__ void linear_find(LinearProbingRef t, const std::uint64_t* keys, std::uint32_t* out, std::size_t n) {
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    const unsigned long long key = keys[i];
    std::uint32_t value = 0xffffffffu;
    std::uint64_t at = hash::home_of(hash::mix(key), t.capacity);
    for (std::uint64_t probes = 0; probes < t.slots; ++probes, at = at + 1 == t.slots ? 0 : at + 1) {
      const unsigned long long k = t.keys[at];
      if (k == key) {
        value = t.values[at];
        break;
      }
      if (k == kLinearEmpty) break;
    }
    out[i] = value;
  }
}

}  // namespace hb::bench
