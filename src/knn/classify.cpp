#include "src/knn/classify.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include <fmt/core.h>

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
  double read = 0, dedup = 0, search = 0, finish = 0;  // finish: voting and writing (TileWriter)
  double probes = 0;  // of dedup: the tiles looked at for duplicates
  double lists = 0;   // the running lists emptied (left unwritten for a GPU search)
};

}  // namespace

std::int64_t tile_rows_for_budget(const io::CubeInfo& info, std::int64_t dims, int k, bool neighbors,
                                  std::int64_t tile_budget_bytes) {
  // A bound over the passes: raw bytes, widened bands and features (FeatureTiles) or the
  // two packed query slots (QueryTiles), validity, lists, outputs.
  const std::int64_t per_pixel = info.bytes_per_pixel() + 4 * info.shape.bands + 12 * dims + 1 +
                                 12 * std::int64_t{k} + 6 + (neighbors ? 24 * std::int64_t{k} : 0);
  return tile_rows_for(per_pixel * info.shape.samples, tile_budget_bytes, info.shape.lines);
}

Result<ClassifyStats> classify_scene(const io::Cube& scene, const classify::BandSelection& selection,
                                     const classify::TrainingSet& training, const PreparedTraining& prepared,
                                     const ClassifyOptions& options, const RowSink& sink,
                                     const std::function<void(std::int64_t, std::int64_t)>& progress,
                                     SinkThread sink_thread) {
  Stopwatch whole;
  SetupTimes setup;
  if (options.k < 1) return Error{ErrorKind::usage, {}, "-k", "k must be at least 1"};
  if (options.k > prepared.count())
    return Error{ErrorKind::usage, {}, "-k",
                 fmt::format("k = {} but the training set has only {} rows", options.k, prepared.count())};
  if (prepared.dims() != selection.dims())
    return Error{ErrorKind::internal, {}, "features", "training and scene feature counts differ"};

  auto search = make_knn_search(options.backend, {options.metric, options.select, std::int64_t{64} << 20});
  if (!search) return search.error();
  setup.made("search");

  ClassifyStats stats;
  stats.backend = std::string((*search)->backend_name());
  stats.tile_rows = options.tile_rows > 0
                        ? options.tile_rows
                        : tile_rows_for_budget(scene.info(), selection.dims(), options.k, options.neighbors,
                                               options.tile_budget_bytes);
  auto voter = make_batch_voter(stats.backend, {training.labels, training.class_count(), options.metric, options.weights});
  if (!voter) return voter.error();
  setup.made("voter");
  TopK running(0, options.k, (*search)->list_memory());
  TileWriter writer(**voter, sink, sink_thread, options.k, options.neighbors, options.metric,
                    (*search)->list_memory());
  std::vector<float> queries;             // a deduplicated tile's rows (gathered ones copied home), then its unique rows
  dedup::AutoRule dedup_rule(options.dedup);
  const std::int64_t dims = selection.dims();
  Stopwatch clock;
  StageTimes times;

  // Queries come packed and shifted, one tile ahead of the search (QueryTiles).
  QueryTiles tiles(scene, selection, classify::row_tiles({0, scene.info().shape.lines}, stats.tile_rows),
                   prepared.shift(), **search);
  setup.made("query reader");
  const auto classify_tile = [&](const QueryTile& t) -> Status {
    const std::int64_t nq = t.count();
    const float* searched_rows = t.queries;
    // Exact duplicate spectra are searched and voted once; `searched` maps a query to its row.
    dedup::Duplicates dup;
    bool deduped = nq > 1 && dedup_rule.use_for_next_tile();
    if (deduped) {
      const Stopwatch probe;
      const auto host_rows = [&] { return tiles.host_queries(t, queries); };
      // Queries gathered on the GPU are looked at there; they come home only to be
      // compacted when some are duplicates (the probes of a scene without any copied
      // 100 MB a tile home and back up for nothing: about 0.4 s at 40 GB on one H100).
      const float* on_device = tiles.device_queries(t);
      auto d = on_device ? dedup::find_duplicates_on_device(on_device, nq, dims, host_rows) : [&] {
        auto rows = host_rows();
        return rows ? dedup::find_duplicates(*rows, dims, options.backend) : Result<dedup::Duplicates>(rows.error());
      }();
      if (!d) return d.error();
      dedup_rule.observe(*d);
      ++stats.deduped_tiles;
      stats.duplicates += d->rows() - d->uniques();
      deduped = d->uniques() < d->rows();  // none found: the packed rows are searched as they are
      if (deduped) {
        auto rows = host_rows();  // the packed rows, or a copy in `queries` of those gathered
        if (!rows) return rows.error();
        if (rows->data() != queries.data()) queries.assign(rows->begin(), rows->end());
        dedup::keep_unique_rows(queries, dims, *d);
        searched_rows = queries.data();
        dup = std::move(*d);
      }
      times.probes += probe.seconds();
    }
    const std::int64_t ns = deduped ? dup.uniques() : nq;
    times.dedup += clock.lap();
    running.resize(ns, (*search)->makes_empty_lists());
    times.lists += clock.lap();
    for (std::int64_t c = 0; c < prepared.chunk_count(); ++c) {
      auto chunk = prepared.chunk(c);
      if (!chunk) return chunk.error();
      HB_TRY((*search)->search(searched_rows, ns, *chunk, running));
    }
    times.search += clock.lap();
    ++stats.tiles;
    stats.classified += nq;
    stats.ignored += t.pixels - nq;
    HB_TRY(writer.write(t.rows, t.pixels, t.pixel, deduped ? std::span<const std::int64_t>(dup.inverse)
                                                             : std::span<const std::int64_t>{},
                        running));
    if (progress) progress(t.rows.end, scene.info().shape.lines);
    times.finish += clock.lap();
    return {};
  };
  for (;;) {
    auto tile = tiles.next();
    const double read = clock.lap();
    times.read += read;
    if (!tile) return tile.error();
    if (*tile == nullptr) break;
    HB_TRY(classify_tile(**tile));
    setup.tile_done("knn", read, times.dedup + times.search);
  }
  HB_TRY(writer.finish());
  times.finish += clock.lap();
  spdlog::info("knn classification ({} tiles): {:.3f} s waiting for packed tiles, {:.3f} s finding duplicates "
               "({:.3f} s in {} tiles looked at), {:.3f} s emptying lists, {:.3f} s searching, {:.3f} s {}",
               stats.tiles, times.read, times.dedup, times.probes, stats.deduped_tiles, times.lists, times.search,
               times.finish,
               sink_thread == SinkThread::any ? "waiting for tiles voted and written behind the search"
                                              : "voting and writing");
  stats.select = (*search)->select_method();
  stats.seconds = whole.lap();
  return stats;
}

}  // namespace hb::knn
