// The training chunks a rank searches for every query tile, in order. One rank holding
// the whole set walks a PreparedTraining (cached, or streamed from its source chunk by
// chunk); several ranks each hold a shard, and the shards either go round a ring or are
// allgathered once (ring.hpp). The classification loop (classify.hpp) sees only this.
#pragma once

#include <memory>

#include "mpi/comm.hpp"
#include "src/knn/prepared_training.hpp"
#include "src/knn/search.hpp"

namespace hb::knn {

struct Shard {
  std::vector<float> rows;  // [count, dims], shifted like the queries
  std::int64_t first = 0;   // global training index of row 0
  std::int64_t count = 0;
};

enum class ShardMode { automatic, ring, allgather };

class TrainingChunks {
 public:
  virtual ~TrainingChunks() = default;
  virtual int steps() const = 0;
  // Chunk `step`, valid until the next call. A tile asks for steps 0, 1, ... in order.
  virtual Result<TrainingChunk> at(int step) = 0;
  // Takes part in the steps from `step` on without searching them, so that a rank that
  // failed keeps its neighbours' transfers going (no hang).
  virtual void skip_from(int step) { (void)step; }
  // True when every rank must take every step of every tile together (the ring).
  virtual bool ranks_in_step() const { return false; }
  // Seconds spent waiting for shards to arrive.
  virtual double waited_seconds() const { return 0; }
  virtual std::string_view mode_name() const = 0;
};

// The chunks of a prepared training set on one rank.
std::unique_ptr<TrainingChunks> prepared_chunks(const PreparedTraining& prepared);

// Every rank's shard, round a ring or allgathered (collective).
std::unique_ptr<TrainingChunks> shard_chunks(Shard mine, std::int64_t dims, ShardMode mode, const mpi::Comm& comm);

}  // namespace hb::knn
