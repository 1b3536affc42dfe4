#include "src/knn/tile_writer.hpp"

#include <limits>
#include <utility>

namespace hb::knn {

TileWriter::TileWriter(BatchVoter& voter, const RowSink& sink, SinkThread thread, int k, bool neighbors,
                       Metric metric, std::pmr::memory_resource* list_memory)
    : voter_(voter), sink_(sink), thread_(thread), k_(k), neighbors_(neighbors), metric_(metric),
      tiles_{Tile(TopK(0, k, list_memory)), Tile(TopK(0, k, list_memory))} {}

TileWriter::~TileWriter() {
  if (pending_.valid()) pending_.wait();
}

Status TileWriter::finish() { return pending_.valid() ? pending_.get() : Status{}; }

Status TileWriter::write(RowRange rows, std::int64_t pixels, std::span<const std::int64_t> pixel,
                         std::span<const std::int64_t> searched, TopK& lists, std::vector<VoteResult>* votes) {
  Tile& tile = tiles_[current_];
  tile.rows = rows;
  tile.pixels = pixels;
  tile.pixel.assign(pixel.begin(), pixel.end());
  tile.searched.assign(searched.begin(), searched.end());
  std::swap(tile.lists, lists);  // one memory resource: the buffers change hands, nothing is copied
  tile.voted = votes != nullptr;
  if (tile.voted) std::swap(tile.votes, *votes);
  if (thread_ == SinkThread::caller) return finish_tile(tile);
  const Status earlier = finish();  // the other tile's buffers are free once it is written
  pending_ = std::async(std::launch::async, [this, &tile] { return finish_tile(tile); });
  current_ ^= 1;
  return earlier;
}

Status TileWriter::finish_tile(Tile& tile) const {
  Status voted;
  if (!tile.voted) {
    tile.votes.resize(static_cast<std::size_t>(tile.lists.queries()));
    voted = voter_.vote(tile.lists, tile.lists.queries(), tile.votes);
  }
  const auto n = static_cast<std::size_t>(tile.pixels);
  const auto k = static_cast<std::size_t>(k_);
  tile.labels.assign(n, 0);
  tile.confidence.assign(n, 0.0f);
  tile.neighbor_index.assign(neighbors_ ? n * k : 0, -1);
  tile.neighbor_distance.assign(neighbors_ ? n * k : 0, std::numeric_limits<float>::quiet_NaN());
  for (std::size_t q = 0; voted.ok() && q < tile.pixel.size(); ++q) {
    const auto p = static_cast<std::size_t>(tile.pixel[q]);
    const auto s = tile.searched.empty() ? static_cast<std::int64_t>(q) : tile.searched[q];
    tile.labels[p] = tile.votes[static_cast<std::size_t>(s)].label;
    tile.confidence[p] = tile.votes[static_cast<std::size_t>(s)].confidence;
    for (std::size_t j = 0; neighbors_ && j < k; ++j) {
      tile.neighbor_index[p * k + j] = tile.lists.indices(s)[j];
      tile.neighbor_distance[p * k + j] = reported_distance(metric_, tile.lists.distances(s)[j]);
    }
  }
  // Written even when the vote failed: ranks may write collectively, and the job stops
  // at its next agreement with nothing committed.
  const Status written =
      sink_({tile.rows, tile.labels, tile.confidence, tile.neighbor_index, tile.neighbor_distance, tile.pixel});
  return voted.ok() ? written : voted;
}

}  // namespace hb::knn
