#include "io/tile.hpp"

#include <algorithm>
#include <memory>

namespace hb::io {

Tile::Tile(DataType type, std::int64_t samples, std::int64_t bands, RowRange held, RowRange core,
           const HostAllocator& allocator) {
  reshape(type, samples, bands, held, core, allocator);
}

Tile::Tile(const Tile& other) { *this = other; }

Tile& Tile::operator=(const Tile& other) {
  if (this == &other) return *this;
  if (other.capacity_ == 0 && other.storage_) {  // borrowed bytes are shared, never copied
    *this = other.with_core(other.core_);
    return *this;
  }
  reshape(other.type_, other.samples_, other.bands_, other.held_, other.core_);
  units_ = other.units_;
  std::copy(other.bytes().begin(), other.bytes().end(), bytes().begin());
  return *this;
}

std::size_t Tile::set_shape(DataType type, std::int64_t samples, std::int64_t bands, RowRange held, RowRange core) {
  type_ = type;
  samples_ = samples;
  bands_ = bands;
  held_ = held;
  core_ = core;
  units_ = nullptr;
  return static_cast<std::size_t>(held.rows() * samples * bands) * bytes_per_sample(type);
}

void Tile::reshape(DataType type, std::int64_t samples, std::int64_t bands, RowRange held, RowRange core,
                   const HostAllocator& allocator) {
  const std::size_t bytes = set_shape(type, samples, bands, held, core);
  reserve(bytes, allocator);  // a borrowed tile has no capacity: it takes memory of its own
  size_ = bytes;
}

void Tile::reserve(std::size_t bytes, const HostAllocator& allocator) {
  if (bytes <= capacity_ && storage_) return;
  // Zero-initialised, as a fresh std::vector would be.
  storage_ = allocator ? allocator(bytes) : std::make_shared<std::byte[]>(bytes);
  capacity_ = bytes;
  device_ = -1;
}

void Tile::borrow(DataType type, std::int64_t samples, std::int64_t bands, RowRange held, RowRange core,
                  std::shared_ptr<std::byte[]> rows, int device) {
  size_ = set_shape(type, samples, bands, held, core);
  storage_ = std::move(rows);
  device_ = device;
  capacity_ = 0;
}

Tile Tile::with_core(RowRange core) const {
  Tile view;
  view.type_ = type_;
  view.samples_ = samples_;
  view.bands_ = bands_;
  view.held_ = held_;
  view.core_ = {std::clamp(core.begin, core_.begin, core_.end), std::clamp(core.end, core_.begin, core_.end)};
  view.storage_ = storage_;
  view.size_ = size_;
  view.capacity_ = capacity_;
  view.units_ = units_;
  view.device_ = device_;
  return view;
}

}  // namespace hb::io
