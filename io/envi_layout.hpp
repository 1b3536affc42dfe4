// Internal: where rows of an ENVI cube lie in its data file for each interleave, and
// the reordering between file order and the canonical in-memory layout (BIP, native
// byte order). Shared by the reader and the writer so that they cannot disagree.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "src/base/error.hpp"
#include "io/metadata.hpp"
#include "io/tile.hpp"

namespace hb::io::envi {

struct Layout {
  CubeShape shape;
  std::size_t sample_bytes = 1;
  std::int64_t header_offset = 0;
  Interleave interleave = Interleave::bsq;

  std::int64_t row_bytes() const { return shape.samples * shape.bands * static_cast<std::int64_t>(sample_bytes); }
  std::int64_t data_bytes() const { return shape.lines * row_bytes(); }

  // Calls Status f(file_offset, buffer_offset, bytes) for each contiguous piece of rows
  // [rows.begin, rows.end) in the file, buffer_offset counting in a file-order buffer
  // of rows.rows() * row_bytes(). BIP and BIL: one piece; BSQ: one piece per band.
  template <class F>
  Status for_each_extent(RowRange rows, F&& f) const {
    const std::int64_t bytes = rows.rows() * row_bytes();
    if (interleave != Interleave::bsq) return f(header_offset + rows.begin * row_bytes(), std::int64_t{0}, bytes);
    const std::int64_t band_row_bytes = shape.samples * static_cast<std::int64_t>(sample_bytes);
    const std::int64_t piece = rows.rows() * band_row_bytes;
    for (std::int64_t b = 0; b < shape.bands; ++b) {
      HB_TRY(f(header_offset + (b * shape.lines + rows.begin) * band_row_bytes, b * piece, piece));
    }
    return {};
  }
};

// Reorders `rows` rows between the file's interleave and BIP. Buffers must not overlap
// and hold rows * layout.row_bytes() bytes each. Byte order is left as it is.
void file_to_canonical(const Layout& layout, std::int64_t rows, const std::byte* file_order, std::byte* canonical);
void canonical_to_file(const Layout& layout, std::int64_t rows, const std::byte* canonical, std::byte* file_order);

// Reverses the bytes of each sample (sample_bytes of 1 leaves the data as it is).
void swap_bytes(std::span<std::byte> data, std::size_t sample_bytes);

}  // namespace hb::io::envi
