// Classification of a whole scene, tile by tile: features -> KnnSearch over every
// training chunk (running top-k) -> vote -> rows handed to a sink. Works on any
// io::Cube, so tests drive it with in-memory scenes.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "io/cube.hpp"
#include "src/backend/backend.hpp"
#include "src/dedup/dedup.hpp"
#include "src/knn/prepared_training.hpp"
#include "src/knn/search.hpp"
#include "src/knn/vote.hpp"

namespace hb::knn {

struct ClassifyOptions {
  int k = 5;
  Metric metric = Metric::euclidean;
  Weights weights = Weights::uniform;
  SelectMethod select = SelectMethod::automatic;
  BackendKind backend = BackendKind::automatic;
  std::int64_t tile_rows = 0;                               // 0 = from tile_budget_bytes
  std::int64_t tile_budget_bytes = std::int64_t{512} << 20;  // per tile: samples, features, lists, outputs
  bool neighbors = false;
  dedup::Mode dedup = dedup::Mode::automatic;  // search each distinct spectrum once (src/dedup)
};

// One tile's results for pixels of scene rows `rows`, in raster order. Ignored pixels
// have label 0, confidence 0, neighbour index -1 and distance NaN.
struct ClassifiedRows {
  RowRange rows;
  std::span<const std::uint16_t> labels;
  std::span<const float> confidence;
  std::span<const std::int64_t> neighbor_index;  // [pixels, k] when options.neighbors
  std::span<const float> neighbor_distance;      // metric distance (Euclidean, not squared)
  std::span<const std::int64_t> classified;      // the pixels classified (not ignored), ascending
};

using RowSink = std::function<Status(const ClassifiedRows&)>;

// Where a RowSink may run: only on the caller's thread (HDF5 outputs: the library is
// not thread-safe here, and ranks write collectively), or on a background thread while
// the caller searches the next tile (ENVI outputs: pwrite of disjoint rows).
enum class SinkThread { caller, any };

struct ClassifyStats {
  std::int64_t classified = 0;
  std::int64_t ignored = 0;
  std::int64_t duplicates = 0;     // classified pixels whose spectrum an earlier pixel of the tile had
  std::int64_t deduped_tiles = 0;  // tiles the duplicate search ran on
  std::int64_t tiles = 0;
  std::int64_t tile_rows = 0;
  SelectMethod select = SelectMethod::automatic;  // what was used
  std::string backend;
  double seconds = 0.0;
};

// Scene rows per tile for a memory budget (at least one row).
std::int64_t tile_rows_for_budget(const io::CubeInfo& info, std::int64_t dims, int k, bool neighbors,
                                  std::int64_t tile_budget_bytes);

Result<ClassifyStats> classify_scene(const io::Cube& scene, const classify::BandSelection& selection,
                                     const classify::TrainingSet& training, const PreparedTraining& prepared,
                                     const ClassifyOptions& options, const RowSink& sink,
                                     const std::function<void(std::int64_t, std::int64_t)>& progress = {},
                                     SinkThread sink_thread = SinkThread::caller);

}  // namespace hb::knn
