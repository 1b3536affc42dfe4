// The backend seam of orthorectification: fill a tile of the map grid from the scene
// rows its GLT entries point at. A pure gather of whole pixels (every band, any sample
// type, copied as bytes), so output values are the input's bits on any backend.
//
// For backends (CPU here, CUDA in src/ortho/cuda_gather.cu):
//  * `source` holds scene rows [source_rows.begin, source_rows.end) in the canonical
//    layout (pixels x bands); every GLT entry of the tile lies inside them (the caller
//    checked the entries against the scene and chose the rows).
//  * An entry of -1 (no data) gets `fill`, one pixel of the output's no-data value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "io/glt/glt.hpp"
#include "io/tile.hpp"
#include "src/backend/backend.hpp"
#include "src/base/error.hpp"

namespace hb::ortho {

struct GatherTile {
  std::span<const std::byte> source;  // scene rows, canonical layout
  RowRange source_rows;
  std::int64_t source_samples = 0;
  std::int64_t pixel_bytes = 0;       // bands * bytes per sample
  const io::GltRows* glt = nullptr;   // this tile's grid pixels (0-based, -1 = none)
  std::int64_t first_pixel = 0;       // where this tile starts in `glt`
  std::int64_t pixels = 0;            // grid pixels of the tile
  std::span<const std::byte> fill;    // pixel_bytes of no-data
};

class Gatherer {
 public:
  virtual ~Gatherer() = default;
  virtual std::string_view backend_name() const = 0;  // "cpu" or "cuda"
  // out: tile.pixels * tile.pixel_bytes bytes.
  virtual Status gather(const GatherTile& tile, std::span<std::byte> out) = 0;
  // Memory for source tiles: pinned on CUDA.
  virtual HostAllocator host_allocator() const { return {}; }
};

std::unique_ptr<Gatherer> make_cpu_gatherer();
// cpu, cuda, or automatic (cuda when compiled in and a GPU is visible).
Result<std::unique_ptr<Gatherer>> make_gatherer(BackendKind kind, int device = kProcessGpu);

}  // namespace hb::ortho
