// The filters of deflated granule chunks undone on the host: which pipelines
// io/emit/chunk_reader.hpp handles, HDF5's shuffle reversed, zlib streams inflated.
#pragma once

#include <hdf5.h>

#include <array>
#include <cstddef>
#include <optional>
#include <vector>

#include "src/base/data_type.hpp"

namespace hb::io::emit {

using Bytes = std::vector<std::byte>;
using Offset = std::array<hsize_t, 3>;

// The filter pipeline as written: shuffle (optional) then deflate, each with its
// position, which the per-chunk filter mask refers to.
struct Layout {
  Offset chunk{};
  std::size_t element = 0;
  int shuffle = -1;  // pipeline position, -1 = absent
  int deflate = -1;

  std::size_t chunk_bytes() const { return chunk[0] * chunk[1] * chunk[2] * element; }
};

// The layout of a chunked dataset stored in the native byte order whose filters are
// deflate with or without shuffle before it; nullopt for any other.
std::optional<Layout> supported_layout(hid_t dataset, DataType type);

// HDF5's shuffle reversed for elements [first, first + count) of a block of n: byte b
// of element i was stored at b * n + i. The elements go to `out`, count * element bytes.
void unshuffle_into(const std::byte* shuffled, std::size_t n, std::size_t first, std::size_t count,
                    std::size_t element, std::byte* out);

// A zlib stream (HDF5's deflate filter) into `out`, which it must fill exactly.
bool inflate(const Bytes& stored, Bytes& out);

}  // namespace hb::io::emit
