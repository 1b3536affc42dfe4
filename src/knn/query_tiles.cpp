#include "src/knn/query_tiles.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "io/tile_reader.hpp"
#include "io/units.hpp"
#include "src/base/stopwatch.hpp"
#include "src/classify/features.hpp"

namespace hb::knn {
namespace {

// A search that gathers narrow tiles itself reads a physical view's stored numbers and
// makes them physical on its device; every other reads the scene as it is. Stored
// floats are read as physical ones: a pixel's validity is then judged on the physical
// values, as on the host (stored, an ignore value that no float equals, or a finite
// sample made infinite by its gain, would be judged otherwise).
io::DeviceSource query_source(const io::Cube& scene, const KnnSearch& search) {
  const auto stored = io::device_source(scene);
  const DataType type = stored.cube.info().type;
  if (stored.units != nullptr && classify::is_narrow(type) && search.gathers(type)) return stored;
  return {scene, nullptr};
}

}  // namespace

QueryTiles::QueryTiles(const io::Cube& scene, const classify::BandSelection& selection, std::vector<RowRange> tiles,
                       std::vector<double> shift, KnnSearch& search)
    : scene_(scene),
      selection_(selection),
      dims_(selection.dims()),
      tiles_(std::move(tiles)),
      shift_(std::move(shift)),
      search_(search) {
  const auto source = query_source(scene, search);
  read_type_ = source.cube.info().type;
  gather_ = search.gathers(read_type_);
  // Stored numbers mark no-data by their own ignore value (the physical view's is NaN).
  ignore_ = source.units ? source.units->ignore : scene.info().meta.data_ignore_value;
  reader_ = std::make_unique<io::TileReader>(source.cube, tiles_, 0,
                                             gather_ ? search.tile_allocator() : HostAllocator{}, source.units);
}

Result<std::span<const float>> QueryTiles::host_queries(const QueryTile& tile, std::vector<float>& scratch) {
  const auto floats = static_cast<std::size_t>(tile.count() * dims_);
  if (!tile.gathered) return std::span<const float>(tile.queries, floats);
  scratch.resize(floats);
  HB_TRY(search_.copy_queries(tile.queries, static_cast<std::int64_t>(floats), scratch.data()));
  return std::span<const float>(scratch);
}

QueryTiles::~QueryTiles() {
  if (pending_.valid()) pending_.wait();
  if (gather_)
    spdlog::debug("knn query tiles ({}): {:.3f} s waiting for reads; worker {:.3f} s while the search listed valid "
                  "pixels and gathered queries from {:.2f} GB of {} tiles",
                  next_, read_seconds_, worker_.gather, static_cast<double>(worker_.bytes) / 1e9,
                  data_type_name(read_type_));
  else
    spdlog::debug("knn query tiles ({}): {:.3f} s waiting for reads; worker {:.3f} s packing {:.2f} GB of FP32 queries",
                  next_, read_seconds_, worker_.pack, static_cast<double>(worker_.bytes) / 1e9);
}

void QueryTiles::start(std::size_t tile) {
  const std::int64_t pixels = tiles_[tile].rows() * scene_.info().shape.samples;
  const int slot = static_cast<int>(tile % 2);
  float* buffer = gather_ ? nullptr : search_.query_buffer(std::max<std::int64_t>(pixels * dims_, 1), slot);
  // The tile is taken here, on the caller's thread: an HDF5 scene is read by the thread
  // that asks (the library is not thread-safe, and the caller writes HDF5 outputs
  // between tiles); an ENVI scene was read ahead on the reader's own thread.
  Stopwatch clock;
  auto raw = reader_->next();
  read_seconds_ += clock.lap();
  pending_ = std::async(std::launch::async, [this, tile, buffer, raw] { return pack(tile, buffer, raw); });
}

Status QueryTiles::pack(std::size_t tile, float* buffer, Result<const io::Tile*> raw) {
  Stopwatch clock;
  if (!raw) return raw.error();
  if (*raw == nullptr) return Error{ErrorKind::internal, {}, "knn", "the scene's tiles ended early"};
  const int slot = static_cast<int>(tile % 2);
  auto& pixel = pixel_[slot];
  const auto ignore = ignore_;
  QueryTile& out = slots_[slot];
  out = {tiles_[tile], (*raw)->pixels(), buffer, gather_, {}};
  if (!gather_) {
    const std::int64_t count = classify::pack_valid_queries(**raw, selection_, ignore, shift_, buffer, valid_, pixel);
    worker_.pack += clock.lap();
    worker_.bytes += count * dims_ * 4;
  } else {
    auto queries = search_.list_and_gather(slot, **raw, selection_, ignore, shift_, pixel);
    worker_.gather += clock.lap();
    worker_.bytes += static_cast<std::int64_t>((*raw)->bytes().size());
    if (!queries) return queries.error();
    out.queries = *queries;
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
