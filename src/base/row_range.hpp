// Rows of a scene: the unit in which scenes are read, split among ranks and written.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace hb {

struct RowRange {
  std::int64_t begin = 0;  // first row
  std::int64_t end = 0;    // one past the last row
  std::int64_t rows() const { return end - begin; }
  bool empty() const { return end <= begin; }
  bool operator==(const RowRange&) const = default;
};

// Rows [core.begin - halo, core.end + halo) clipped to [0, lines).
inline RowRange with_halo(RowRange core, std::int64_t halo_rows, std::int64_t lines) {
  return {std::max<std::int64_t>(0, core.begin - halo_rows), std::min<std::int64_t>(lines, core.end + halo_rows)};
}

// Host memory for tiles. A backend may supply its own (the CUDA backend gives pinned
// memory, so tiles cross to the device without an extra copy); empty = plain heap.
using HostAllocator = std::function<std::shared_ptr<std::byte[]>(std::size_t bytes)>;

}  // namespace hb
