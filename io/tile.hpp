// A Tile is a band of whole scene rows in the canonical layout: pixels x bands,
// row-major (band-interleaved-by-pixel), native byte order, the scene's data type.
// It may carry halo rows above and below its core rows for neighbourhood filters.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "io/metadata.hpp"
#include "src/base/row_range.hpp"

namespace hb::io {

// Stored samples that stand for physical ones (io/units.hpp): a device that widens
// samples itself takes the stored numbers (int16 crosses the host-device link as 2
// bytes) and makes physical_sample(stored, gain[band], offset[band]) of each, NaN where
// the stored sample is `ignore`.
struct StoredUnits {
  std::vector<double> gain, offset;  // per band
  std::optional<double> ignore;      // the stored no-data value
};

class Tile {
 public:
  Tile() = default;
  Tile(const Tile& other);  // deep copy (into plain heap memory)
  Tile& operator=(const Tile& other);
  Tile(Tile&&) noexcept = default;
  Tile& operator=(Tile&&) noexcept = default;
  Tile(DataType type, std::int64_t samples, std::int64_t bands, RowRange held, RowRange core,
       const HostAllocator& allocator = {});

  // Becomes a tile of the given shape, keeping its memory when it is large enough
  // (streams of tiles reuse a few buffers instead of touching fresh memory each time).
  void reshape(DataType type, std::int64_t samples, std::int64_t bands, RowRange held, RowRange core,
               const HostAllocator& allocator = {});
  // Makes room for `bytes` without changing the shape.
  void reserve(std::size_t bytes, const HostAllocator& allocator = {});
  // Becomes a tile of the given shape whose bytes are `rows`, memory of `device` (a GPU;
  // -1 the host) owned elsewhere (a loaded file image, io/file_image.hpp): nothing is
  // copied, and a copy of the tile borrows them too. A later reshape or reserve takes
  // host memory of its own rather than write into them.
  void borrow(DataType type, std::int64_t samples, std::int64_t bands, RowRange held, RowRange core,
              std::shared_ptr<std::byte[]> rows, int device);
  // Where bytes() lie: -1 in host memory; else in that GPU's, for its operations only.
  int device() const { return device_; }

  DataType type() const { return type_; }
  std::int64_t samples() const { return samples_; }
  std::int64_t bands() const { return bands_; }
  RowRange held() const { return held_; }  // rows present in memory, halo included
  RowRange core() const { return core_; }  // rows this tile is responsible for
  // The same held rows (storage shared, nothing copied) responsible for `core` only,
  // which must lie within core(): granules of a tile that is on a device already.
  Tile with_core(RowRange core) const;
  std::int64_t pixels() const { return held_.rows() * samples_; }
  // The units of stored samples that stand for physical ones, or null when the samples
  // are the numbers themselves (the reader that reads stored numbers says so).
  const StoredUnits* units() const { return units_; }
  void set_units(const StoredUnits* units) { units_ = units; }

  std::span<std::byte> bytes() { return {storage_.get(), size_}; }
  std::span<const std::byte> bytes() const { return {storage_.get(), size_}; }

  // Typed view of the held rows; T must match type().
  template <class T>
  std::span<T> as() {
    return {reinterpret_cast<T*>(storage_.get()), size_ / sizeof(T)};
  }
  template <class T>
  std::span<const T> as() const {
    return {reinterpret_cast<const T*>(storage_.get()), size_ / sizeof(T)};
  }
  // Offset, in samples, of pixel (row, sample) where row is a scene row in held().
  std::int64_t offset(std::int64_t row, std::int64_t sample) const {
    return ((row - held_.begin) * samples_ + sample) * bands_;
  }

 private:
  // Sets the shape (no units) and returns the held rows' size in bytes.
  std::size_t set_shape(DataType type, std::int64_t samples, std::int64_t bands, RowRange held, RowRange core);

  DataType type_ = DataType::f32;
  std::int64_t samples_ = 0;
  std::int64_t bands_ = 0;
  RowRange held_;
  RowRange core_;
  std::shared_ptr<std::byte[]> storage_;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  const StoredUnits* units_ = nullptr;
  int device_ = -1;
};

}  // namespace hb::io
