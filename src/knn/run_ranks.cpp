// `hyperbatch knn` over several MPI ranks (run_knn_job hands over when the world has
// more than one rank). Each rank: draws the same split as every other rank from its
// share of the truth raster (rank_draw.hpp), gathers the features of its shard of
// training rows only (global rows [count r/P, count (r+1)/P)), and classifies a block of
// rows balanced by valid pixels. Reports come from rank 0 with counts summed over ranks.
#include <spdlog/spdlog.h>

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <utility>

#include "mpi/agree.hpp"
#include "mpi/comm.hpp"
#include "mpi/decomposition.hpp"
#include "src/backend/rank_backend.hpp"
#include "src/base/parallel_for.hpp"
#include "src/base/stopwatch.hpp"
#include "src/classify/evaluation.hpp"
#include "src/classify/scene_pass.hpp"
#include "src/classify/training_file.hpp"
#include "src/knn/outputs.hpp"
#include "src/knn/rank_draw.hpp"
#include "src/knn/ring.hpp"
#include "src/knn/run.hpp"

namespace hb::knn {
namespace {

// Valid pixels a row for balancing the blocks: exact from a mask, or estimated from
// every stride-th row (each rank reading those of its even share), which costs about
// kBalanceRows rows instead of a pass over the scene.
constexpr std::int64_t kBalanceRows = 1024;

Result<std::vector<std::int64_t>> valid_per_row(const io::Cube& cube, const classify::BandSelection& selection,
                                                const std::vector<std::uint8_t>& mask, const mpi::Comm& comm) {
  const auto& shape = cube.info().shape;
  std::vector<std::int64_t> rows(static_cast<std::size_t>(shape.lines));
  if (!mask.empty()) {
    for (std::int64_t r = 0; r < shape.lines; ++r)
      rows[static_cast<std::size_t>(r)] = std::count(mask.begin() + r * shape.samples,
                                                     mask.begin() + (r + 1) * shape.samples, std::uint8_t{1});
    return rows;
  }
  const std::int64_t stride = std::max<std::int64_t>(1, (shape.lines + kBalanceRows - 1) / kBalanceRows);
  const auto share = mpi::even_rows(shape.lines, comm);
  std::vector<RowRange> sampled;
  for (std::int64_t r = (share.begin + stride - 1) / stride * stride; r < share.end; r += stride) sampled.push_back({r, r + 1});
  std::vector<std::int64_t> mine;
  Status read = classify::for_each_validity_tile(cube, selection, sampled, [&](std::span<const std::uint8_t> valid) {
    mine.push_back(std::count(valid.begin(), valid.end(), std::uint8_t{1}));
  });
  auto counts = gathered(read ? Result<std::vector<std::int64_t>>(std::move(mine))
                              : Result<std::vector<std::int64_t>>(read.error()), comm);
  if (!counts) return counts.error();
  for (std::int64_t r = 0; r < shape.lines; ++r) rows[static_cast<std::size_t>(r)] = (*counts)[static_cast<std::size_t>(r / stride)];
  return rows;
}

// The shift (training mean) from every rank's shard, summed exactly (FixedSum).
Result<std::vector<double>> shared_shift(const Shard& shard, std::int64_t dims, std::int64_t total, Metric metric,
                                         const std::string& source, const mpi::Comm& comm) {
  FixedSum mine(dims);
  HB_TRY(mpi::agree(mine.add(shard.rows.data(), shard.count, source, shard.first), comm));
  FixedSum sum(dims);
  for (int r = 0; r < comm.size(); ++r) {
    FixedSum part(dims);
    part.high() = mine.high();
    part.low() = mine.low();
    comm.broadcast(part.high(), r);
    std::vector<std::int64_t> low(part.low().begin(), part.low().end());
    comm.broadcast(low, r);
    std::copy(low.begin(), low.end(), part.low().begin());
    sum.add(part);
  }
  if (!metric_is_shift_invariant(metric)) return std::vector<double>(static_cast<std::size_t>(dims), 0.0);
  return sum.mean(total);
}

// Query blocks balanced by valid pixels (a count per row).
RowRange query_block(const io::CubeShape& shape, std::int64_t tile_rows, const std::vector<std::int64_t>& valid,
                         const mpi::Comm& comm) {
  const mpi::TileGrid grid{shape.lines, mpi::balance_rows(shape.lines, tile_rows, comm.size())};
  const auto cuts = mpi::cuts_by_valid_pixels(grid, mpi::tile_sums(grid, valid), shape.samples, comm.size());
  return mpi::block_of(grid, cuts, comm.rank()).rows;
}

classify::ConfusionMatrix summed(const classify::ConfusionMatrix& mine, const mpi::Comm& comm) {
  const int n = mine.classes();
  std::vector<std::int64_t> counts(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  for (int t = 0; t < n; ++t)
    for (int p = 0; p < n; ++p) counts[static_cast<std::size_t>(t * n + p)] = mine.at(t, p);
  comm.allreduce_sum(counts);
  classify::ConfusionMatrix all(n);
  for (int t = 0; t < n; ++t)
    for (int p = 0; p < n; ++p)
      if (const auto c = counts[static_cast<std::size_t>(t * n + p)]; c > 0) all.add(t, p, c);
  return all;
}

}  // namespace

Result<KnnJobResult> run_knn_job_ranks(const KnnJob& job, const mpi::Comm& comm, const ProgressFn& progress) {
  if (!job.save_training.empty() || !job.export_split.empty() || job.features.kind == classify::FeatureSpec::Kind::mnf)
    return Error{ErrorKind::usage, {}, "--save-training",
                 "--save-training, --export-split and --features mnf:N run on one rank only for now"};
  // The host passes below share this node's cores with its other ranks. The GPU is bound
  // after them: binding waits for this rank's CUDA context, which main's warm-up thread
  // makes meanwhile (0.3 s of every two-GPU run went to waiting for it here).
  share_host_threads(mpi::placement(comm).local_size);
  auto cube = io::open_cube(job.scene);
  HB_TRY(mpi::agree(cube ? Status{} : Status{cube.error()}, comm));
  const auto& info = (*cube)->info();
  const auto& shape = info.shape;
  const classify::BandSelection selection = classify::select_good_bands(info);
  if (selection.dims() == 0) return bad_input(job.scene, "bbl", "every band is marked bad");
  const std::int64_t tile_rows = job_tile_rows(job, info, selection.dims());

  Stopwatch clock;
  double split_seconds = 0, gather_seconds = 0;
  auto truth = read_truth_share(job, shape, comm);
  if (!truth) return truth.error();
  const double truth_seconds = clock.lap();

  // Labels of every row; features of this rank's shard only.
  classify::TrainingSet training;
  std::vector<std::uint8_t> valid;  // the whole mask, when the split needed it
  Shard shard;
  const int r = comm.rank();
  const int size = comm.size();
  Status local;
  const auto& truth_meta = truth->meta;
  if (job.train_file.empty()) {
    auto drawn = draw_training(job, **cube, selection, tile_rows, *truth, comm);
    if (!drawn) return drawn.error();
    if (drawn->pixels.empty()) return bad_input(job.truth, "data", "no labelled pixel with usable scene data");
    const auto count = static_cast<std::int64_t>(drawn->pixels.size());
    shard.first = count * r / size;
    shard.count = count * (r + 1) / size - shard.first;
    split_seconds = clock.lap();
    const std::span<const std::int64_t> pixels(drawn->pixels.data() + shard.first, static_cast<std::size_t>(shard.count));
    auto features = classify::gather_features(**cube, selection, pixels, tile_rows);
    gather_seconds = clock.lap();
    if (features) shard.rows = std::move(*features);
    else local = features.error();
    training.labels = std::move(drawn->labels);
    training.classes = {truth_meta.class_names, truth_meta.class_lookup};
    training.pixels = std::move(drawn->pixels);
    valid = std::move(drawn->valid);
  } else {
    auto file = classify::read_training_file(job.train_file);
    HB_TRY(mpi::agree(file ? Status{} : Status{file.error()}, comm));
    training = std::move(*file);
    if (training.classes.names.empty()) training.classes = {truth_meta.class_names, truth_meta.class_lookup};
    local = classify::check_compatible(training, selection, job.scene);
    shard.first = training.count() * r / size;
    shard.count = training.count() * (r + 1) / size - shard.first;
    shard.rows.resize(static_cast<std::size_t>(shard.count * selection.dims()));
    if (local.ok()) local = training.features->read(shard.first, shard.count, shard.rows.data());
  }
  HB_TRY(mpi::agree(local, comm));
  auto device = rank_device(job.classify.backend, comm);  // each rank's search on its own GPU
  if (!device) return device.error();
  const std::int64_t rows_total = static_cast<std::int64_t>(training.labels.size());
  if (job.classify.k > rows_total)
    return Error{ErrorKind::usage, {}, "-k",
                 fmt::format("k = {} but the training set has only {} rows", job.classify.k, rows_total)};
  auto shift = shared_shift(shard, selection.dims(), rows_total, job.classify.metric,
                            job.train_file.empty() ? job.scene : job.train_file, comm);
  if (!shift) return shift.error();
  for (std::size_t i = 0; i < shard.rows.size(); ++i) {
    const auto b = i % static_cast<std::size_t>(selection.dims());
    shard.rows[i] = static_cast<float>(static_cast<double>(shard.rows[i]) - (*shift)[b]);
  }

  KnnJobResult result;
  RunReport& report = result.report;
  report = job_report(job, training, truth_meta, rows_total);
  OutputRequest request{job.output, &info, job.scene, report.classes, job.classify.k, job.classify.neighbors,
                        fmt::format("hyperbatch knn of {} (k = {}, {}, {} weights)", job.scene, job.classify.k,
                                    metric_name(job.classify.metric), weights_name(job.classify.weights)),
                        &comm};
  auto outputs = create_knn_outputs(request);
  HB_TRY(mpi::agree(outputs ? Status{} : Status{outputs.error()}, comm));

  const auto training_bytes = rows_total * selection.dims() * static_cast<std::int64_t>(sizeof(float));
  const ShardMode mode = choose_shard_mode(job.shard_mode, training_bytes, size, job.train_cache_bytes);
  spdlog::info("knn across {} ranks: {} training rows ({} MB) {}", size, rows_total, training_bytes / 1000000,
               mode == ShardMode::ring ? "sharded round a ring" : "allgathered");
  auto row_valid = valid_per_row(**cube, selection, valid, comm);
  if (!row_valid) return row_valid.error();
  const RowRange block = query_block(shape, tile_rows, *row_valid, comm);
  HB_TRY(hold_truth_rows(*truth, block, job.truth, shape, comm));
  const double balance_seconds = clock.lap();

  // A training file's pixels are another scene's: every labelled pixel is evaluated.
  const std::span<const std::int64_t> drawn = job.train_file.empty() ? training.pixels : std::span<const std::int64_t>{};
  classify::EvaluationTally tally(truth->ids, truth->rows.begin * shape.samples, truth->top_class, drawn,
                                  static_cast<int>(report.classes.names.size()), shape.samples);
  const RowSink sink = [&](const ClassifiedRows& rows) -> Status {
    HB_TRY((*outputs)->write(rows));
    tally.add(rows.rows, rows.labels, rows.classified);
    return {};
  };
  const RankClassifyInput in{&**cube, &selection, training.labels, training.class_count(), *shift, block,
                             progress, (*outputs)->sink_thread()};
  spdlog::info("knn rank {}: truth {:.3f} s, split {:.3f} s, training shard gathered {:.3f} s, blocks balanced "
               "{:.3f} s", r, truth_seconds, split_seconds, gather_seconds, balance_seconds);
  auto stats = classify_rows_across_ranks(in, std::move(shard), mode, job.classify, sink, comm);
  if (!stats) return stats.error();
  clock.lap();
  HB_TRY((*outputs)->commit());
  if (comm.is_root()) spdlog::info("knn outputs committed: {:.3f} s", clock.lap());
  report.stats = *stats;
  report.outputs = (*outputs)->paths();
  if (truth->top_class >= 0)
    if (auto all = summed(tally.matrix(), comm); all.total() > 0) report.matrix = std::move(all);
  Status written;
  if ((report.matrix || !job.report.empty()) && comm.is_root()) {
    result.report_paths = job_report_paths(job);
    written = write_reports(report, *result.report_paths);
  }
  HB_TRY(mpi::agree(written, comm));
  return result;
}

}  // namespace hb::knn
