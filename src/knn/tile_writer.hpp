// Classified tiles finished behind the search: a tile's lists are voted on, the votes
// spread over its rows (labels, confidence, neighbours) and the rows handed to the sink
// on a background thread while the caller searches the next tile. On one GPU at 40 GB
// of scene, voting, spreading and writing took 1.0 s of a 4.8 s classification, the
// search waiting meanwhile. Where the sink must run on the caller's thread
// (SinkThread::caller), all of it runs there at once.
#pragma once

#include <array>
#include <cstdint>
#include <future>
#include <memory_resource>
#include <span>
#include <utility>
#include <vector>

#include "src/knn/batch_vote.hpp"
#include "src/knn/classify.hpp"
#include "src/knn/distance.hpp"
#include "src/knn/topk.hpp"

namespace hb::knn {

class TileWriter {
 public:
  // `list_memory`: the search's (KnnSearch::list_memory), whose lists write() takes.
  TileWriter(BatchVoter& voter, const RowSink& sink, SinkThread thread, int k, bool neighbors, Metric metric,
             std::pmr::memory_resource* list_memory);
  ~TileWriter();  // waits for the last tile
  TileWriter(const TileWriter&) = delete;
  TileWriter& operator=(const TileWriter&) = delete;

  // Tile `rows` of `pixels` pixels: `pixel` lists its classified pixels (tile-local,
  // ascending), `searched` maps each to its row of `lists` (empty: row q is pixel q's).
  // `pixel` and `searched` are copied; `lists` is swapped for an older list buffer (of
  // the same memory), so the caller may search into it at once. `votes`, when the search
  // voted on its device (KnnSearch::search_sequence_and_vote), are taken instead of
  // voting on `lists`. Returns a failure of the vote or the sink: this tile's on the
  // caller's thread, an earlier tile's on a background one.
  Status write(RowRange rows, std::int64_t pixels, std::span<const std::int64_t> pixel,
               std::span<const std::int64_t> searched, TopK& lists, std::vector<VoteResult>* votes = nullptr);
  // Waits for the last tile; its failure, if any.
  Status finish();

 private:
  struct Tile {
    explicit Tile(TopK empty_lists) : lists(std::move(empty_lists)) {}
    RowRange rows;
    std::int64_t pixels = 0;
    std::vector<std::int64_t> pixel, searched;
    TopK lists;
    std::vector<VoteResult> votes;
    bool voted = false;  // votes came with the tile
    // The rows' outputs, raster order.
    std::vector<std::uint16_t> labels;
    std::vector<float> confidence, neighbor_distance;
    std::vector<std::int64_t> neighbor_index;
  };
  Status finish_tile(Tile& tile) const;

  BatchVoter& voter_;
  const RowSink& sink_;
  SinkThread thread_;
  int k_;
  bool neighbors_;
  Metric metric_;
  std::array<Tile, 2> tiles_;
  std::size_t current_ = 0;
  std::future<Status> pending_;
};

}  // namespace hb::knn
