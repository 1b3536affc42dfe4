#include "src/knn/query_tiles.hpp"

#include <algorithm>

#include "io/tile_reader.hpp"

namespace hb::knn {

QueryTiles::QueryTiles(const io::Cube& scene, const BandSelection& selection, std::vector<io::RowRange> tiles,
                       std::vector<double> shift, BufferFn buffer)
    : scene_(scene), selection_(selection), dims_(selection.dims()), tiles_(std::move(tiles)),
      shift_(std::move(shift)), buffer_(std::move(buffer)), reader_(std::make_unique<io::TileReader>(scene, tiles_, 0)) {}

QueryTiles::~QueryTiles() {
  if (pending_.valid()) pending_.wait();
}

void QueryTiles::start(std::size_t tile) {
  const std::int64_t pixels = tiles_[tile].rows() * scene_.info().shape.samples;
  float* buffer = buffer_(static_cast<int>(tile % 2), std::max<std::int64_t>(pixels * dims_, 1));
  pending_ = std::async(std::launch::async, [this, tile, buffer] { return pack(tile, buffer); });
}

Status QueryTiles::pack(std::size_t tile, float* buffer) {
  auto raw = reader_->next();
  if (!raw) return raw.error();
  if (*raw == nullptr) return Error{ErrorKind::internal, {}, "knn", "the scene's tiles ended early"};
  auto& pixel = pixel_[tile % 2];
  const std::int64_t count = pack_valid_queries(**raw, selection_, scene_.info().meta.data_ignore_value, shift_,
                                                buffer, valid_, pixel);
  slots_[tile % 2] = {tiles_[tile], (*raw)->pixels(), {buffer, static_cast<std::size_t>(count * dims_)}, pixel};
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
