// Classification of a block of scene rows, tile by tile: features -> KnnSearch over
// every training chunk (running top-k) -> vote -> rows handed to a sink. One loop for
// one rank and for many: the training chunks (training_chunks.hpp) are a rank's own or
// come round from the others. Works on any io::Cube, so tests drive it with in-memory
// scenes.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "io/cube.hpp"
#include "mpi/comm.hpp"
#include "src/backend/backend.hpp"
#include "src/dedup/dedup.hpp"
#include "src/knn/prepared_training.hpp"
#include "src/knn/search.hpp"
#include "src/knn/training_chunks.hpp"
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

// What a rank classifies: its block of scene rows against its training chunks.
struct BlockInput {
  const io::Cube* scene = nullptr;
  const classify::BandSelection* selection = nullptr;
  std::span<const std::uint16_t> labels;  // every training row's class (2 bytes a row: all ranks hold them)
  int classes = 0;
  std::span<const double> shift;          // the training shift, applied to the queries
  RowRange block;                         // this rank's query rows
  std::function<void(std::int64_t, std::int64_t)> progress;  // (rows done, rows) of the block
  SinkThread sink_thread = SinkThread::caller;
};

// Collective. Where ranks must keep in step (the ring hands shards on every tile; HDF5
// outputs, written in the caller's thread, are written collectively) every rank makes
// the same number of sink calls, empty ones past its own rows. Counts in the result are
// summed over ranks.
Result<ClassifyStats> classify_block(const BlockInput& in, TrainingChunks& training, const ClassifyOptions& options,
                                     const RowSink& sink, const mpi::Comm& comm);

// One rank, the whole scene, the training set prepared on this rank.
Result<ClassifyStats> classify_scene(const io::Cube& scene, const classify::BandSelection& selection,
                                     const classify::TrainingSet& training, const PreparedTraining& prepared,
                                     const ClassifyOptions& options, const RowSink& sink,
                                     const std::function<void(std::int64_t, std::int64_t)>& progress = {},
                                     SinkThread sink_thread = SinkThread::caller);

}  // namespace hb::knn
