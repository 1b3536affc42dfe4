// Query tiles prepared one ahead of the search: while the caller searches tile i (the
// GPU busy, the calling thread waiting on it), a worker thread prepares tile i + 1, which
// the caller took from an io::TileReader (an ENVI scene is read one further ahead on the
// reader's thread; an HDF5 scene is read by the caller, the library not being
// thread-safe). The worker packs the valid pixels as FP32 queries shifted by the
// training mean into the other of two slots of the search's buffers
// (pack_valid_queries), or, for a search that gathers queries itself (u8/i16/u16 and
// f32 on a GPU), hands the raw tile over (KnnSearch::list_and_gather: the GPU lists the
// valid pixels and gathers; a physical view's stored numbers are read and made physical
// there), so that its copy and the gathering overlap the current tile's search.
// Without the worker the host's reading and packing and the GPU's search took turns,
// and each sat idle half the pass.
#pragma once

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "src/classify/scene_pass.hpp"
#include "src/knn/search.hpp"

namespace hb::io {
class TileReader;
}

namespace hb::knn {

struct QueryTile {
  RowRange rows;
  std::int64_t pixels = 0;               // the tile's pixels, valid or not
  const float* queries = nullptr;        // [count, dims] for KnnSearch::search
  bool gathered = false;                 // queries are the search's own (device) copy
  std::span<const std::int64_t> pixel;   // tile-local pixel of each query
  std::int64_t count() const { return static_cast<std::int64_t>(pixel.size()); }
};

class QueryTiles {
 public:
  // The search's buffers are asked for on the caller's thread (a CUDA search pins memory
  // there) each time a slot is refilled.
  QueryTiles(const io::Cube& scene, const classify::BandSelection& selection, std::vector<RowRange> tiles,
             std::vector<double> shift, KnnSearch& search);
  ~QueryTiles();
  QueryTiles(const QueryTiles&) = delete;
  QueryTiles& operator=(const QueryTiles&) = delete;

  // The next tile (valid until the following call), or nullptr after the last one.
  Result<QueryTile*> next();
  // A tile's queries in host memory: its packed rows, or `scratch` copied from the search.
  Result<std::span<const float>> host_queries(const QueryTile& tile, std::vector<float>& scratch);
  // The tile's queries when they are in the GPU's memory, else nullptr.
  const float* device_queries(const QueryTile& tile) const {
    return tile.gathered && search_.queries_on_device(tile.queries) ? tile.queries : nullptr;
  }

 private:
  void start(std::size_t tile);  // the worker packs `tile` into slot tile % 2
  Status pack(std::size_t tile, float* buffer, Result<const io::Tile*> raw);

  const io::Cube& scene_;
  const classify::BandSelection& selection_;
  std::int64_t dims_;
  std::vector<RowRange> tiles_;
  std::vector<double> shift_;
  KnnSearch& search_;
  bool gather_ = false;                // raw tiles handed to the search, which gathers the queries
  DataType read_type_ = DataType::f32;  // the samples' type as read (stored numbers for a gathering search)
  std::optional<double> ignore_;        // the no-data value of the samples as read
  std::unique_ptr<io::TileReader> reader_;
  std::size_t next_ = 0;
  std::future<Status> pending_;
  QueryTile slots_[2];
  std::vector<std::int64_t> pixel_[2];
  std::vector<std::uint8_t> valid_;  // the worker's scratch
  double read_seconds_ = 0;  // the caller's, waiting for the reader
  struct {
    double pack = 0, gather = 0;  // seconds: validity and packing, or list_and_gather()
    std::int64_t bytes = 0;       // packed, or raw tiles handed over
  } worker_;                      // the worker's own, logged at the end
};

}  // namespace hb::knn
