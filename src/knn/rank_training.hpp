// This rank's part of KNN's training set, the same code for one rank and for many:
// labels and pixels of every training row on every rank (2 and 8 bytes a row), features
// of this rank's rows only (global rows [count r/P, count (r+1)/P)), drawn from the
// truth raster or read from a training file, and the training chunks the
// classification searches. One rank prepares the whole set in chunks, streamed from a
// large training file; several ranks shift their shards by the exact mean of all of them
// (FixedSum) and pass them round a ring or allgather them.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "io/cube.hpp"
#include "mpi/comm.hpp"
#include "src/classify/features.hpp"
#include "src/classify/training.hpp"
#include "src/knn/rank_draw.hpp"
#include "src/knn/run.hpp"
#include "src/knn/training_chunks.hpp"

namespace hb::knn {

struct RankTraining {
  classify::TrainingSet set;  // every row's labels and pixels; features: this rank's rows
  std::int64_t first = 0;     // global index of this rank's first row
  std::vector<std::uint8_t> valid;  // the scene's validity mask, when a fraction's draw needed it
  std::int64_t rows() const { return static_cast<std::int64_t>(set.labels.size()); }
};

// Collective: the split drawn from the truth, or the training file's rows.
Result<RankTraining> rank_training(const KnnJob& job, const io::Cube& scene, const classify::BandSelection& selection,
                                   std::int64_t tile_rows, const TruthRows& truth, const mpi::Comm& comm);

// Every training row's features in index order, on every rank (for --save-training).
Result<std::vector<float>> all_training_rows(const RankTraining& training, const mpi::Comm& comm);

struct SearchableTraining {
  std::unique_ptr<PreparedTraining> prepared;  // one rank
  std::unique_ptr<TrainingChunks> chunks;
  std::vector<double> shift;  // applied to the queries
  std::string mode;           // for the log
};

// Collective: the chunks every query tile is searched against. Host work only, so that
// it overlaps the start of the rank's CUDA context; size_chunks() then sizes them.
Result<SearchableTraining> searchable(const RankTraining& training, const KnnJob& job, const mpi::Comm& comm);
// Training rows per chunk for a search on a GPU (`on_gpu`) or the CPU: --train-chunk-rows,
// else the backend's. A rank's shard of several is searched whole.
void size_chunks(SearchableTraining& search, const KnnJob& job, bool on_gpu);

// This rank's query rows: every row on one rank; on several, blocks balanced by valid
// pixels (counted from the draw's mask, or estimated from a sample of rows).
Result<RowRange> query_block(const io::Cube& scene, const classify::BandSelection& selection, std::int64_t tile_rows,
                             const std::vector<std::uint8_t>& valid, const mpi::Comm& comm);

}  // namespace hb::knn
