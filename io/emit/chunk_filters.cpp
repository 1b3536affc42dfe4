#include "io/emit/chunk_filters.hpp"

#include <libdeflate.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>

#include "io/hdf5_handle.hpp"
#include "io/hdf5_layout.hpp"

namespace hb::io::emit {

std::optional<Layout> supported_layout(hid_t dataset, DataType type) {
  h5::PropertyList dcpl(H5Dget_create_plist(dataset));
  if (!dcpl || H5Pget_layout(dcpl.get()) != H5D_CHUNKED) return std::nullopt;
  Layout layout;
  if (H5Pget_chunk(dcpl.get(), 3, layout.chunk.data()) != 3) return std::nullopt;
  const int filters = H5Pget_nfilters(dcpl.get());
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t values = 0;
    const H5Z_filter_t filter = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &values, nullptr, 0,
                                               nullptr, &config);
    if (filter == H5Z_FILTER_SHUFFLE && layout.deflate < 0 && layout.shuffle < 0) layout.shuffle = i;
    else if (filter == H5Z_FILTER_DEFLATE && layout.deflate < 0) layout.deflate = i;
    else return std::nullopt;  // fletcher32, szip, n-bit, ... or an order we do not undo
  }
  if (layout.deflate < 0) return std::nullopt;  // nothing to gain over the library
  h5::Datatype stored(H5Dget_type(dataset));
  if (!stored || H5Tequal(stored.get(), h5::memory_type(type)) <= 0) return std::nullopt;  // other byte order
  layout.element = bytes_per_sample(type);
  return layout;
}

void unshuffle_into(const std::byte* shuffled, std::size_t n, std::size_t first, std::size_t count,
                    std::size_t element, std::byte* out) {
  const auto* plane = reinterpret_cast<const std::uint8_t*>(shuffled) + first;
  if (element == 4 && std::endian::native == std::endian::little) {
    // float32 and int32, the common case: four byte planes into words (vectorises).
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint32_t word = std::uint32_t{plane[i]} | std::uint32_t{plane[n + i]} << 8 |
                                 std::uint32_t{plane[2 * n + i]} << 16 | std::uint32_t{plane[3 * n + i]} << 24;
      std::memcpy(out + 4 * i, &word, 4);
    }
    return;
  }
  for (std::size_t i = 0; i < count; ++i)  // writes in order; reads `element` streams
    for (std::size_t b = 0; b < element; ++b) out[i * element + b] = std::byte{plane[b * n + i]};
}

// HDF5's deflate filter writes zlib streams. libdeflate inflates them about twice as
// fast as zlib; a decompressor per call, as they are not shared between threads.
bool inflate(const Bytes& stored, Bytes& out) {
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  if (d == nullptr) return false;
  std::size_t size = 0;
  const auto result = libdeflate_zlib_decompress(d, stored.data(), stored.size(), out.data(), out.size(), &size);
  libdeflate_free_decompressor(d);
  return result == LIBDEFLATE_SUCCESS && size == out.size();
}

}  // namespace hb::io::emit
