// Query tiles packed one ahead of the search: while the caller searches tile i (the GPU
// busy, the calling thread waiting on it), a worker thread takes tile i + 1 from an
// io::TileReader (read one further ahead) and packs its valid pixels, widened and
// shifted by the training mean, straight into the other of two buffers
// (pack_valid_queries). Without it the host's reading and packing and the GPU's search
// took turns, and each sat idle half the pass.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <future>
#include <span>
#include <vector>

#include "src/knn/scene_pass.hpp"

namespace hb::io {
class TileReader;
}

namespace hb::knn {

struct QueryTile {
  io::RowRange rows;
  std::int64_t pixels = 0;               // the tile's pixels, valid or not
  std::span<float> queries;              // [count, dims]: its valid pixels, shifted
  std::span<const std::int64_t> pixel;   // tile-local pixel of each query
  std::int64_t count() const { return static_cast<std::int64_t>(pixel.size()); }
};

class QueryTiles {
 public:
  // buffer(slot, floats): room for one tile's queries in slot 0 or 1. Called on the
  // caller's thread (a CUDA search pins memory there) each time a slot is refilled:
  // the buffer handed out last for a slot is the one that slot's tile is packed into.
  using BufferFn = std::function<float*(int slot, std::int64_t floats)>;
  QueryTiles(const io::Cube& scene, const BandSelection& selection, std::vector<io::RowRange> tiles,
             std::vector<double> shift, BufferFn buffer);
  ~QueryTiles();
  QueryTiles(const QueryTiles&) = delete;
  QueryTiles& operator=(const QueryTiles&) = delete;

  // The next tile (valid until the following call), or nullptr after the last one.
  Result<QueryTile*> next();

 private:
  void start(std::size_t tile);  // the worker packs `tile` into slot tile % 2
  Status pack(std::size_t tile, float* buffer);

  const io::Cube& scene_;
  const BandSelection& selection_;
  std::int64_t dims_;
  std::vector<io::RowRange> tiles_;
  std::vector<double> shift_;
  BufferFn buffer_;
  std::unique_ptr<io::TileReader> reader_;
  std::size_t next_ = 0;
  std::future<Status> pending_;
  QueryTile slots_[2];
  std::vector<std::int64_t> pixel_[2];
  std::vector<std::uint8_t> valid_;  // the worker's scratch
};

}  // namespace hb::knn
