// The 64-bit fingerprint of a spectrum's bytes, the same on host and device: XOR over
// elements of mix(bits | position), mixed once more with the length. Position enters
// every term, so permuted spectra differ; equal bytes always give equal fingerprints.
// (Equal fingerprints do not prove equal bytes: dedup compares rows in full.)
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/hash/layout.hpp"

namespace hb::dedup {

HB_HASH_HD std::uint64_t element_term(std::uint32_t bits, std::uint64_t position) {
  return hash::mix((position << 32 | bits) ^ 0x6a09e667f3bcc909ull);
}

HB_HASH_HD std::uint64_t finish_fingerprint(std::uint64_t terms, std::uint64_t dims) {
  return hash::mix(terms ^ (dims * 0xbb67ae8584caa73bull));
}

inline std::uint64_t fingerprint(const float* row, std::int64_t dims) {
  std::uint64_t terms = 0;
  for (std::int64_t e = 0; e < dims; ++e) {
    std::uint32_t bits;
    std::memcpy(&bits, row + e, sizeof bits);
    terms ^= element_term(bits, static_cast<std::uint64_t>(e));
  }
  return finish_fingerprint(terms, static_cast<std::uint64_t>(dims));
}

}  // namespace hb::dedup
