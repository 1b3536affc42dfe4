#include "src/knn/ring.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include <fmt/core.h>

#include "mpi/agree.hpp"
#include "src/base/stopwatch.hpp"
#include "src/knn/batch_vote.hpp"
#include "src/knn/query_tiles.hpp"
#include "src/knn/setup_times.hpp"
#include "src/knn/tile_writer.hpp"

namespace hb::knn {
namespace {

constexpr int kRingTag = 7201;

// The shards a rank searches, in step order: its own first, then those coming round.
class ShardStream {
 public:
  ShardStream(Shard mine, std::int64_t dims, ShardMode mode, const mpi::Comm& comm)
      : comm_(comm), dims_(dims), mode_(mode) {
    const auto counts = comm.allgather(mine.count);
    const auto firsts = comm.allgather(mine.first);
    for (std::size_t r = 0; r < counts.size(); ++r) shards_.push_back({firsts[r], counts[r]});
    if (mode == ShardMode::allgather) {
      const auto all = comm.allgather_bytes(std::as_bytes(std::span<const float>(mine.rows)));
      everything_.resize(all.size() / sizeof(float));
      std::memcpy(everything_.data(), all.data(), all.size());
    } else {
      std::int64_t largest = 0;
      for (const auto& s : shards_) largest = std::max(largest, s.count);
      own_ = std::move(mine.rows);
      current_.resize(static_cast<std::size_t>(largest * dims));
      next_.resize(current_.size());
    }
  }

  int steps() const { return mode_ == ShardMode::allgather ? 1 : comm_.size(); }

  // Starts moving the shard for step + 1 (ring only).
  void start(int step) {
    if (mode_ == ShardMode::allgather || step + 1 >= steps()) return;
    const int size = comm_.size();
    const int rank = comm_.rank();
    const auto sent = shards_[static_cast<std::size_t>(owner(step))].count * dims_;
    const auto got = shards_[static_cast<std::size_t>(owner(step + 1))].count * dims_;
    exchange_ = mpi::Exchange(comm_, std::as_bytes(std::span<const float>(rows(step), static_cast<std::size_t>(sent))),
                              (rank + 1) % size,
                              std::as_writable_bytes(std::span<float>(next_.data(), static_cast<std::size_t>(got))),
                              (rank - 1 + size) % size, kRingTag);
  }
  // Completes the transfer started at `step` and makes its shard current.
  void finish(int step) {
    if (mode_ == ShardMode::allgather || step + 1 >= steps()) return;
    exchange_.wait();
    std::swap(current_, next_);
  }

  TrainingChunk chunk(int step) const {
    if (mode_ == ShardMode::allgather) {
      std::int64_t total = 0;
      for (const auto& s : shards_) total += s.count;
      return {everything_.data(), total, dims_, shards_.front().first};
    }
    const auto& s = shards_[static_cast<std::size_t>(owner(step))];
    return {rows(step), s.count, dims_, s.first};
  }

 private:
  struct Span {
    std::int64_t first, count;
  };
  int owner(int step) const { return (comm_.rank() - step + comm_.size()) % comm_.size(); }
  // Step 0 searches this rank's own shard, kept apart so that every query tile starts from it.
  const float* rows(int step) const { return step == 0 ? own_.data() : current_.data(); }

  const mpi::Comm& comm_;
  std::int64_t dims_;
  ShardMode mode_;
  std::vector<Span> shards_;
  std::vector<float> own_, current_, next_, everything_;
  mpi::Exchange exchange_;
};

struct RankTimes {
  double read = 0, search = 0, wait = 0, agree = 0, finish = 0;  // finish: voting and writing (TileWriter)
};

}  // namespace

ShardMode choose_shard_mode(ShardMode requested, std::int64_t training_bytes, int ranks,
                            std::int64_t allgather_max_bytes) {
  if (requested != ShardMode::automatic) return requested;
  if (ranks == 1) return ShardMode::allgather;
  return training_bytes <= allgather_max_bytes ? ShardMode::allgather : ShardMode::ring;
}

Result<ClassifyStats> classify_rows_across_ranks(const RankClassifyInput& in, Shard mine, ShardMode mode,
                                                 const ClassifyOptions& options, const RowSink& sink,
                                                 const mpi::Comm& comm) {
  Stopwatch whole;
  SetupTimes setup;
  const auto& scene = *in.scene;
  const std::int64_t dims = in.selection->dims();
  auto search = make_knn_search(options.backend, {options.metric, options.select, std::int64_t{64} << 20});
  HB_TRY(mpi::agree(search ? Status{} : Status{search.error()}, comm));
  setup.made("search");

  ClassifyStats stats;
  stats.backend = std::string((*search)->backend_name());
  stats.tile_rows = options.tile_rows > 0 ? options.tile_rows
                                          : tile_rows_for_budget(scene.info(), dims, options.k, options.neighbors,
                                                                 options.tile_budget_bytes);
  const auto tiles = classify::row_tiles(in.block, stats.tile_rows);
  // Ranks keep in step where they must: the ring hands shards on every tile, and HDF5
  // outputs (written in the caller's thread) are written collectively; those make the
  // same number of calls, empty ones past their rows, and agree on failure every tile.
  // Allgathered shards written to ENVI let each rank run through its own tiles and
  // agree once, at the end (two GPUs at 40 GB: 684 agreements a rank, most of the 0.3 s
  // its log left unaccounted).
  const bool in_step = mode == ShardMode::ring || in.sink_thread == SinkThread::caller;
  const auto counts = comm.allgather(static_cast<std::int64_t>(tiles.size()));
  const std::int64_t calls = in_step ? *std::max_element(counts.begin(), counts.end())
                                     : static_cast<std::int64_t>(tiles.size());

  ShardStream stream(std::move(mine), dims, mode, comm);
  setup.made(mode == ShardMode::ring ? "shard sizes" : "training set allgathered");
  auto voter = make_batch_voter(stats.backend, {in.labels, in.classes, options.metric, options.weights});
  HB_TRY(mpi::agree(voter ? Status{} : Status{voter.error()}, comm));
  setup.made("voter");
  QueryTiles reader(scene, *in.selection, tiles, {in.shift.begin(), in.shift.end()}, **search);
  setup.made("query reader");
  TopK running(0, options.k, (*search)->list_memory());
  TileWriter writer(**voter, sink, in.sink_thread, options.k, options.neighbors, options.metric,
                    (*search)->list_memory());
  RankTimes times;
  const std::string who = fmt::format("knn rank {}", comm.rank());
  Status local;  // this rank's first failure: a read, a search, or a tile written behind the search
  for (std::int64_t i = 0; i < calls; ++i) {
    const bool have = i < static_cast<std::int64_t>(tiles.size());
    const RowRange rows = have ? tiles[static_cast<std::size_t>(i)] : RowRange{};
    const std::int64_t pixels = rows.rows() * scene.info().shape.samples;
    Stopwatch clock;
    // Packed where the search wants them (pinned on a GPU, or gathered there from the
    // raw tile) while the previous tile was searched: uploaded once for every shard.
    const float* queries = nullptr;
    std::span<const std::int64_t> query_pixel;
    if (have && local.ok()) {
      auto tile = reader.next();
      if (!tile) local = tile.error();
      else if (*tile == nullptr) local = Error{ErrorKind::internal, {}, "knn", "the query tiles ended early"};
      else {
        queries = (*tile)->queries;
        query_pixel = (*tile)->pixel;
      }
    }
    const double read = clock.lap();
    times.read += read;
    const auto nq = local.ok() ? static_cast<std::int64_t>(query_pixel.size()) : 0;
    running.resize(nq, (*search)->makes_empty_lists());
    // Every rank searches every shard, the next one arriving while this one is searched.
    // Each step completes the previous step's transfer and starts the next one.
    double waited = 0;
    int steps_taken = 0;
    const auto chunk_at = [&](int step) -> Result<TrainingChunk> {
      Stopwatch wait_clock;
      if (step > 0) stream.finish(step - 1);
      waited += wait_clock.lap();
      stream.start(step);
      steps_taken = step + 1;
      return stream.chunk(step);
    };
    if (local.ok()) local = (*search)->search_sequence(queries, nq, stream.steps(), chunk_at, running);
    // A rank that failed still takes part in every transfer, so that none hangs.
    for (int step = steps_taken; step < stream.steps(); ++step) (void)chunk_at(step);
    const double searched = clock.lap() - waited;
    times.search += searched;
    times.wait += waited;
    setup.tile_done(who, read, searched);
    if (in_step) {
      HB_TRY(mpi::agree(local, comm));
      times.agree += clock.lap();
    } else if (!local.ok()) {
      break;
    }
    stats.classified += nq;
    stats.ignored += pixels - nq;
    // Every rank hands every tile over, empty ones included: HDF5 writes are collective.
    local = writer.write(rows, pixels, query_pixel, {}, running);
    times.finish += clock.lap();
    if (have && in.progress) in.progress(rows.end - in.block.begin, in.block.rows());
  }
  Stopwatch finishing;
  const Status written = writer.finish();
  if (local.ok()) local = written;
  times.finish += finishing.lap();
  HB_TRY(mpi::agree(local, comm));
  times.agree += finishing.lap();
  spdlog::info("knn rank {}: rows [{}, {}), {} mode: {:.3f} s reading, {:.3f} s searching, {:.3f} s waiting for "
               "shards, {:.3f} s waiting for the other ranks, {:.3f} s {}",
               comm.rank(), in.block.begin, in.block.end, mode == ShardMode::ring ? "ring" : "allgather", times.read,
               times.search, times.wait, times.agree, times.finish,
               in.sink_thread == SinkThread::any ? "waiting for tiles voted and written behind the search"
                                                 : "voting and writing");
  std::int64_t totals[2] = {stats.classified, stats.ignored};
  comm.allreduce_sum(totals);
  stats.classified = totals[0];
  stats.ignored = totals[1];
  stats.select = (*search)->select_method();
  stats.seconds = whole.lap();
  return stats;
}

}  // namespace hb::knn
