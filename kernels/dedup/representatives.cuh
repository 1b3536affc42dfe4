// Duplicate spectra on the GPU: one warp per row fingerprints it, inserts fingerprint ->
// row into a GpuHopscotchTable through its device ref, and compares the row in full with
// the row that holds the fingerprint. Host-only declarations (includable from g++).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "src/base/error.hpp"

namespace hb::dedup {

inline constexpr std::int64_t kCollision = -1;  // same fingerprint, different bytes: the host resolves

// Per row: the row it duplicates (itself when first seen or when the table had no
// slot for it), or kCollision. rows: host [n, dims] float32.
Result<std::vector<std::int64_t>> gpu_representatives(std::span<const float> rows, std::int64_t dims);
// The same for rows already on the current GPU (device memory, complete before the call),
// except that it is empty when every row is its own representative (no copy, no
// collision): a count crosses home instead of n representatives, and most tiles
// probed have no copy.
Result<std::vector<std::int64_t>> gpu_representatives_on_device(const float* device_rows, std::int64_t n,
                                                                std::int64_t dims);

}  // namespace hb::dedup
