#include "src/knn/query_tiles.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "io/tile_reader.hpp"
#include "src/stopwatch.hpp"

namespace hb::knn {

std::span<const float> host_queries(const QueryTile& tile, std::int64_t dims, std::span<const double> shift,
                                    std::vector<float>& scratch) {
  const auto floats = static_cast<std::size_t>(tile.count() * dims);
  if (tile.packed_type == io::DataType::f32) return {static_cast<const float*>(tile.packed), floats};
  scratch.resize(floats);
  widen_queries(tile.packed, tile.packed_type, tile.count(), dims, shift, scratch.data());
  return scratch;
}

QueryTiles::QueryTiles(const io::Cube& scene, const BandSelection& selection, std::vector<io::RowRange> tiles,
                       std::vector<double> shift, KnnSearch& search)
    : scene_(scene),
      selection_(selection),
      dims_(selection.dims()),
      tiles_(std::move(tiles)),
      shift_(std::move(shift)),
      search_(search),
      narrow_(search.widens_narrow(scene.info().type)),
      reader_(std::make_unique<io::TileReader>(scene, tiles_, 0)) {}

QueryTiles::~QueryTiles() {
  if (pending_.valid()) pending_.wait();
  spdlog::debug("knn query tiles ({}): {:.3f} s waiting for reads; worker {:.3f} s packing {:.2f} GB of queries ({}), "
                "{:.3f} s handing them to the search",
                next_, read_seconds_, worker_.pack, static_cast<double>(worker_.bytes) / 1e9,
                narrow_ ? io::data_type_name(scene_.info().type) : "float32", worker_.hand);
}

void QueryTiles::start(std::size_t tile) {
  const std::int64_t pixels = tiles_[tile].rows() * scene_.info().shape.samples;
  const int slot = static_cast<int>(tile % 2);
  void* buffer = narrow_ ? search_.narrow_buffer(scene_.info().type, pixels, dims_, slot)
                         : static_cast<void*>(search_.query_buffer(std::max<std::int64_t>(pixels * dims_, 1), slot));
  // The tile is taken here, on the caller's thread: an HDF5 scene is read by the thread
  // that asks (the library is not thread-safe, and the caller writes HDF5 outputs
  // between tiles); an ENVI scene was read ahead on the reader's own thread.
  Stopwatch clock;
  auto raw = reader_->next();
  read_seconds_ += clock.lap();
  pending_ = std::async(std::launch::async, [this, tile, buffer, raw] { return pack(tile, buffer, raw); });
}

Status QueryTiles::pack(std::size_t tile, void* buffer, Result<const io::Tile*> raw) {
  Stopwatch clock;
  if (!raw) return raw.error();
  if (*raw == nullptr) return Error{ErrorKind::internal, {}, "knn", "the scene's tiles ended early"};
  const int slot = static_cast<int>(tile % 2);
  auto& pixel = pixel_[slot];
  const auto ignore = scene_.info().meta.data_ignore_value;
  QueryTile& out = slots_[slot];
  out = {tiles_[tile], (*raw)->pixels(), static_cast<const float*>(buffer), buffer, io::DataType::f32, {}};
  if (!narrow_) {
    const std::int64_t count =
        pack_valid_queries(**raw, selection_, ignore, shift_, static_cast<float*>(buffer), valid_, pixel);
    worker_.pack += clock.lap();
    worker_.bytes += count * dims_ * 4;
  } else {
    const std::int64_t count = pack_valid_samples(**raw, selection_, ignore, buffer, valid_, pixel);
    worker_.pack += clock.lap();
    worker_.bytes += count * dims_ * static_cast<std::int64_t>(io::bytes_per_sample(scene_.info().type));
    auto queries = search_.widen(slot, scene_.info().type, count, dims_, shift_);
    worker_.hand += clock.lap();
    if (!queries) return queries.error();
    out.queries = *queries;
    out.packed_type = scene_.info().type;
  }
  out.pixel = pixel;
  return {};
}

Result<QueryTile*> QueryTiles::next() {
  if (next_ >= tiles_.size()) return static_cast<QueryTile*>(nullptr);
  if (next_ == 0) start(0);
  const Status packed = pending_.get();
  const std::size_t current = next_++;
  if (!packed) return packed.error();
  if (next_ < tiles_.size()) start(next_);
  return &slots_[current % 2];
}

}  // namespace hb::knn
