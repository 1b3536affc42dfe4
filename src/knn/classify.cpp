#include "src/knn/classify.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include <fmt/core.h>

#include "mpi/agree.hpp"
#include "src/base/stopwatch.hpp"
#include "src/base/tile_budget.hpp"
#include "src/knn/batch_vote.hpp"
#include "src/knn/query_tiles.hpp"
#include "src/knn/setup_times.hpp"
#include "src/knn/tile_writer.hpp"

namespace hb::knn {
namespace {

// Where a classification's time goes, for the log.
struct StageTimes {
  double read = 0, dedup = 0, lists = 0, search = 0, agree = 0, finish = 0;  // finish: voting and writing
  double probes = 0;  // of dedup: the tiles looked at for duplicates
};

// A tile's queries as searched: exact duplicate spectra kept once (src/dedup) when the
// rule says the tile is worth looking at, `inverse` mapping each query to its row.
struct SearchedRows {
  const float* rows = nullptr;
  std::int64_t count = 0;
  dedup::Duplicates duplicates;
  bool deduped = false;
};

Result<SearchedRows> unique_queries(const QueryTile& t, QueryTiles& tiles, dedup::AutoRule& rule, std::int64_t dims,
                                    BackendKind backend, std::vector<float>& scratch, ClassifyStats& stats) {
  SearchedRows out{t.queries, t.count(), {}, false};
  if (t.count() <= 1 || !rule.use_for_next_tile()) return out;
  const auto host_rows = [&] { return tiles.host_queries(t, scratch); };
  // Queries gathered on the GPU are looked at there; they come home only to be
  // compacted when some are duplicates (the probes of a scene without any copied
  // 100 MB a tile home and back up for nothing: about 0.4 s at 40 GB on one H100).
  const float* on_device = tiles.device_queries(t);
  auto d = on_device ? dedup::find_duplicates_on_device(on_device, t.count(), dims, host_rows) : [&] {
    auto rows = host_rows();
    return rows ? dedup::find_duplicates(*rows, dims, backend) : Result<dedup::Duplicates>(rows.error());
  }();
  if (!d) return d.error();
  rule.observe(*d);
  ++stats.deduped_tiles;
  stats.duplicates += d->rows() - d->uniques();
  if (d->uniques() == d->rows()) return out;  // none found: the packed rows are searched as they are
  auto rows = host_rows();  // the packed rows, or a copy in `scratch` of those gathered
  if (!rows) return rows.error();
  if (rows->data() != scratch.data()) scratch.assign(rows->begin(), rows->end());
  dedup::keep_unique_rows(scratch, dims, *d);
  out.rows = scratch.data();
  out.count = d->uniques();
  out.duplicates = std::move(*d);
  out.deduped = true;
  return out;
}

void sum_over_ranks(ClassifyStats& stats, const mpi::Comm& comm) {
  std::int64_t totals[] = {stats.classified, stats.ignored, stats.duplicates, stats.deduped_tiles, stats.tiles};
  comm.allreduce_sum(totals);
  stats.classified = totals[0];
  stats.ignored = totals[1];
  stats.duplicates = totals[2];
  stats.deduped_tiles = totals[3];
  stats.tiles = totals[4];
}

}  // namespace

std::int64_t tile_rows_for_budget(const io::CubeInfo& info, std::int64_t dims, int k, bool neighbors,
                                  std::int64_t tile_budget_bytes) {
  // A bound over the passes: raw bytes, widened bands and features (FeatureTiles) or the
  // two packed query slots (QueryTiles), validity, lists, outputs.
  const std::int64_t per_pixel = info.bytes_per_pixel() + 4 * info.shape.bands + 12 * dims + 1 +
                                 12 * std::int64_t{k} + 6 + (neighbors ? 24 * std::int64_t{k} : 0);
  return tile_rows_for(per_pixel * info.shape.samples, tile_budget_bytes, info.shape.lines);
}

Result<ClassifyStats> classify_block(const BlockInput& in, TrainingChunks& training, const ClassifyOptions& options,
                                     const RowSink& sink, const mpi::Comm& comm) {
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
  // Ranks keep in step where they must: the ring and HDF5 outputs make the same number
  // of calls and agree on failure every tile. Allgathered shards written to ENVI let each
  // rank run through its own tiles and agree once, at the end (two GPUs at 40 GB: 684
  // agreements a rank, most of the 0.3 s its log left unaccounted).
  const bool in_step = training.ranks_in_step() || in.sink_thread == SinkThread::caller;
  const auto counts = comm.allgather(static_cast<std::int64_t>(tiles.size()));
  const std::int64_t calls = in_step ? *std::max_element(counts.begin(), counts.end())
                                     : static_cast<std::int64_t>(tiles.size());
  const VoteRule rule{in.labels, in.classes, options.metric, options.weights};
  auto voter = make_batch_voter(stats.backend, rule);
  HB_TRY(mpi::agree(voter ? Status{} : Status{voter.error()}, comm));
  // Without neighbour outputs a GPU votes where the lists are; they never come home.
  const bool votes_on_device = !options.neighbors && (*search)->prepare_votes(rule);
  std::vector<VoteResult> votes;
  setup.made("voter");
  QueryTiles reader(scene, *in.selection, tiles, {in.shift.begin(), in.shift.end()}, **search);
  setup.made("query reader");
  TopK running(0, options.k, (*search)->list_memory());
  TileWriter writer(**voter, sink, in.sink_thread, options.k, options.neighbors, options.metric,
                    (*search)->list_memory());
  dedup::AutoRule dedup_rule(options.dedup);
  std::vector<float> scratch;  // a deduplicated tile's rows (gathered ones copied home), then its unique rows
  StageTimes times;
  const std::string who = fmt::format("knn rank {}", comm.rank());
  Status local;  // this rank's first failure: a read, a search, or a tile written behind the search
  for (std::int64_t i = 0; i < calls; ++i) {
    const bool have = i < static_cast<std::int64_t>(tiles.size());
    const RowRange rows = have ? tiles[static_cast<std::size_t>(i)] : RowRange{};
    Stopwatch clock;
    // Packed where the search wants them (pinned on a GPU, or gathered there from the
    // raw tile) while the previous tile was searched: uploaded once for every chunk.
    QueryTile empty{rows, 0, nullptr, false, {}};
    const QueryTile* tile = &empty;
    if (have && local.ok()) {
      auto next = reader.next();
      if (!next) local = next.error();
      else if (*next == nullptr) local = Error{ErrorKind::internal, {}, "knn", "the query tiles ended early"};
      else tile = *next;
    }
    const double read = clock.lap();
    times.read += read;
    Result<SearchedRows> searched = SearchedRows{};
    if (local.ok()) {
      const Stopwatch probe;
      const auto looked_at = stats.deduped_tiles;
      searched = unique_queries(*tile, reader, dedup_rule, dims, options.backend, scratch, stats);
      if (stats.deduped_tiles != looked_at) times.probes += probe.seconds();
      if (!searched) local = searched.error();
    }
    times.dedup += clock.lap();
    const std::int64_t ns = local.ok() ? searched->count : 0;
    running.resize(ns, (*search)->makes_empty_lists());
    times.lists += clock.lap();
    // Every chunk is searched, the next one arriving (ring) or read (streamed) in turn;
    // a rank that failed still takes part in every transfer, so that none hangs.
    int steps_taken = 0;
    const auto chunk_at = [&](int step) {
      steps_taken = step + 1;
      return training.at(step);
    };
    bool voted = false;
    if (local.ok() && votes_on_device) {
      auto done = (*search)->search_sequence_and_vote(searched->rows, ns, training.steps(), chunk_at, running, votes);
      if (done) voted = *done;
      else local = done.error();
    } else if (local.ok()) {
      local = (*search)->search_sequence(searched->rows, ns, training.steps(), chunk_at, running);
    }
    training.skip_from(steps_taken);
    const double search_seconds = clock.lap();
    times.search += search_seconds;
    setup.tile_done(who, read, search_seconds);
    if (in_step) {
      HB_TRY(mpi::agree(local, comm));
      times.agree += clock.lap();
    } else if (!local.ok()) {
      break;
    }
    if (have) ++stats.tiles;
    stats.classified += tile->count();
    stats.ignored += rows.rows() * scene.info().shape.samples - tile->count();
    // Every rank hands every tile over, empty ones included: HDF5 writes are collective.
    const auto inverse = searched->deduped ? std::span<const std::int64_t>(searched->duplicates.inverse)
                                           : std::span<const std::int64_t>{};
    local = writer.write(rows, rows.rows() * scene.info().shape.samples, tile->pixel, inverse, running,
                         voted ? &votes : nullptr);
    times.finish += clock.lap();
    if (have && in.progress) in.progress(rows.end - in.block.begin, in.block.rows());
  }
  Stopwatch finishing;
  const Status written = writer.finish();
  if (local.ok()) local = written;
  times.finish += finishing.lap();
  HB_TRY(mpi::agree(local, comm));
  times.agree += finishing.lap();
  const double waited = training.waited_seconds();
  spdlog::info("{}: rows [{}, {}), training {}: {:.3f} s waiting for packed tiles, {:.3f} s finding duplicates "
               "({:.3f} s in {} tiles looked at), {:.3f} s emptying lists, {:.3f} s searching, {:.3f} s waiting for "
               "shards, {:.3f} s waiting for the other ranks, {:.3f} s {}",
               who, in.block.begin, in.block.end, training.mode_name(), times.read, times.dedup, times.probes,
               stats.deduped_tiles, times.lists, times.search - waited, waited, times.agree, times.finish,
               in.sink_thread == SinkThread::any ? "waiting for tiles voted and written behind the search"
                                                 : "voting and writing");
  sum_over_ranks(stats, comm);
  stats.select = (*search)->select_method();
  stats.seconds = whole.lap();
  return stats;
}

Result<ClassifyStats> classify_scene(const io::Cube& scene, const classify::BandSelection& selection,
                                     const classify::TrainingSet& training, const PreparedTraining& prepared,
                                     const ClassifyOptions& options, const RowSink& sink,
                                     const std::function<void(std::int64_t, std::int64_t)>& progress,
                                     SinkThread sink_thread) {
  if (options.k < 1) return Error{ErrorKind::usage, {}, "-k", "k must be at least 1"};
  if (options.k > prepared.count())
    return Error{ErrorKind::usage, {}, "-k",
                 fmt::format("k = {} but the training set has only {} rows", options.k, prepared.count())};
  if (prepared.dims() != selection.dims())
    return Error{ErrorKind::internal, {}, "features", "training and scene feature counts differ"};
  const BlockInput in{&scene, &selection, training.labels, training.class_count(), prepared.shift(),
                      {0, scene.info().shape.lines}, progress, sink_thread};
  const auto chunks = prepared_chunks(prepared);
  return classify_block(in, *chunks, options, sink, mpi::Comm::self());
}

}  // namespace hb::knn
