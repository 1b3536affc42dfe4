// The KNN classification spread over MPI ranks. The training set is sharded (rank r
// holds global rows [first, first + count), prepared like the queries); each rank
// classifies the query rows of its block. Two modes:
//  * ring: shards travel round the ranks (MPI_Isend/Irecv to the next rank, from the
//    previous one); the transfer of the next shard overlaps the search of the one in
//    hand, and each query's running top-k folds in every shard. No rank ever holds more
//    than two shards.
//  * allgather: small training sets are copied whole to every rank once.
// Top-k lists order candidates by (distance, global index), and a pair's distance does
// not depend on which shard or step brought it, so labels are the same bits for any
// rank count and mode. In ring mode, and whenever the sink runs in the caller's thread
// (HDF5, written collectively), every rank makes the same number of sink calls (empty
// ones past its own rows); allgathered shards with a sink of any thread run free.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "mpi/comm.hpp"
#include "src/knn/classify.hpp"

namespace hb::knn {

struct Shard {
  std::vector<float> rows;  // [count, dims], shifted like the queries
  std::int64_t first = 0;   // global training index of row 0
  std::int64_t count = 0;
};

enum class ShardMode { automatic, ring, allgather };

// Measured on 2 CPU ranks (src/knn/README.md, "Across ranks"): with the training set in
// memory, allgather beats the ring by ~10% (the ring searches P smaller chunks per
// tile; its transfers were fully hidden), so the crossover is memory: allgather while
// the whole set fits `allgather_max_bytes` per rank (the job's training cache budget).
ShardMode choose_shard_mode(ShardMode requested, std::int64_t training_bytes, int ranks,
                            std::int64_t allgather_max_bytes);

struct RankClassifyInput {
  const io::Cube* scene = nullptr;
  const classify::BandSelection* selection = nullptr;
  std::span<const std::uint16_t> labels;  // every training row's class (2 bytes a row: all ranks hold them)
  int classes = 0;
  std::span<const double> shift;          // applied to the queries
  RowRange block;                     // this rank's query rows
  std::function<void(std::int64_t, std::int64_t)> progress;  // (rows done, rows) of the block
  SinkThread sink_thread = SinkThread::caller;
};

Result<ClassifyStats> classify_rows_across_ranks(const RankClassifyInput& in, Shard mine, ShardMode mode,
                                                 const ClassifyOptions& options, const RowSink& sink,
                                                 const mpi::Comm& comm);

}  // namespace hb::knn
