#include "io/envi_layout.hpp"

#include <algorithm>
#include <cstring>

namespace hb::io::envi {
namespace {

// dst (cols x rows) = transpose of src (rows x cols), elements of N bytes, in tiles
// small enough that both sides stay in cache.
template <std::size_t N>
void transpose(const std::byte* src, std::byte* dst, std::int64_t rows, std::int64_t cols) {
  constexpr std::int64_t kTile = 32;
  for (std::int64_t i0 = 0; i0 < rows; i0 += kTile) {
    const std::int64_t i1 = std::min(rows, i0 + kTile);
    for (std::int64_t j0 = 0; j0 < cols; j0 += kTile) {
      const std::int64_t j1 = std::min(cols, j0 + kTile);
      for (std::int64_t i = i0; i < i1; ++i)
        for (std::int64_t j = j0; j < j1; ++j) std::memcpy(dst + (j * rows + i) * N, src + (i * cols + j) * N, N);
    }
  }
}

void transpose_any(const std::byte* src, std::byte* dst, std::int64_t rows, std::int64_t cols, std::size_t bytes) {
  switch (bytes) {
    case 1: return transpose<1>(src, dst, rows, cols);
    case 2: return transpose<2>(src, dst, rows, cols);
    case 4: return transpose<4>(src, dst, rows, cols);
    default: return transpose<8>(src, dst, rows, cols);
  }
}

// BSQ holds the request as bands x pixels, BIL as `rows` blocks of bands x samples;
// BIP is the canonical layout. `to_file` picks the direction.
void reorder(const Layout& layout, std::int64_t rows, const std::byte* src, std::byte* dst, bool to_file) {
  const auto& s = layout.shape;
  const std::size_t n = layout.sample_bytes;
  switch (layout.interleave) {
    case Interleave::bip:
      std::memcpy(dst, src, static_cast<std::size_t>(rows * layout.row_bytes()));
      return;
    case Interleave::bsq:
      if (to_file)
        transpose_any(src, dst, rows * s.samples, s.bands, n);
      else
        transpose_any(src, dst, s.bands, rows * s.samples, n);
      return;
    case Interleave::bil:
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::int64_t at = r * layout.row_bytes();
        if (to_file)
          transpose_any(src + at, dst + at, s.samples, s.bands, n);
        else
          transpose_any(src + at, dst + at, s.bands, s.samples, n);
      }
      return;
  }
}

template <class U, U (*Swap)(U)>
void swap_each(std::span<std::byte> data) {
  for (std::size_t i = 0; i + sizeof(U) <= data.size(); i += sizeof(U)) {
    U v;
    std::memcpy(&v, data.data() + i, sizeof(U));
    v = Swap(v);
    std::memcpy(data.data() + i, &v, sizeof(U));
  }
}

std::uint16_t swap16(std::uint16_t v) { return __builtin_bswap16(v); }
std::uint32_t swap32(std::uint32_t v) { return __builtin_bswap32(v); }
std::uint64_t swap64(std::uint64_t v) { return __builtin_bswap64(v); }

}  // namespace

void file_to_canonical(const Layout& layout, std::int64_t rows, const std::byte* file_order, std::byte* canonical) {
  reorder(layout, rows, file_order, canonical, false);
}

void canonical_to_file(const Layout& layout, std::int64_t rows, const std::byte* canonical, std::byte* file_order) {
  reorder(layout, rows, canonical, file_order, true);
}

void swap_bytes(std::span<std::byte> data, std::size_t sample_bytes) {
  switch (sample_bytes) {
    case 2: return swap_each<std::uint16_t, swap16>(data);
    case 4: return swap_each<std::uint32_t, swap32>(data);
    case 8: return swap_each<std::uint64_t, swap64>(data);
    default: return;
  }
}

}  // namespace hb::io::envi
