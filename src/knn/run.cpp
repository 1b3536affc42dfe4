#include "src/knn/run.hpp"

#include <spdlog/spdlog.h>

#include <fmt/core.h>

#include <filesystem>
#include <utility>

#include "io/file_identity.hpp"
#include "mpi/agree.hpp"
#include "src/backend/rank_backend.hpp"
#include "src/base/parallel_for.hpp"
#include "src/base/stopwatch.hpp"
#include "src/classify/evaluation.hpp"
#include "src/classify/training_file.hpp"
#include "src/knn/mnf_features.hpp"
#include "src/knn/outputs.hpp"
#include "src/knn/rank_draw.hpp"
#include "src/knn/rank_training.hpp"

namespace hb::knn {
namespace {

// Every file the job reads and writes, outputs named next to the code that names them.
io::FilePlan file_plan(const KnnJob& job) {
  io::FilePlan plan;
  plan.read_cube("scene", job.scene);
  plan.read_cube("--truth", job.truth);
  plan.read_file("--train", job.train_file);
  plan.read_file("--apply", job.mnf_stats);
  plan_knn_outputs(plan, job.output, job.classify.neighbors);
  if (!job.truth.empty() || !job.report.empty()) {  // reports are written when there is a matrix
    const auto reports = job_report_paths(job);
    const std::string option = job.report.empty() ? "-o" : "--report";
    plan.write_file(option, reports.json);
    plan.write_file(option, reports.markdown);
  }
  plan.write_file("--export-split", job.export_split);
  plan.write_file("--save-training", job.save_training);
  return plan;
}

Status check_job(const KnnJob& job) {
  HB_TRY(file_plan(job).check());
  if (job.truth.empty() && job.train_file.empty())
    return Error{ErrorKind::usage, {}, "--truth", "give --truth RASTER (with a split) or --train FILE.h5"};
  if (!job.train_file.empty() && (job.split.fraction || job.split.per_class))
    return Error{ErrorKind::usage, {}, "--train", "--train-fraction/--train-per-class need --truth without --train"};
  if (!job.mnf_stats.empty() && job.features.kind != classify::FeatureSpec::Kind::mnf)
    return Error{ErrorKind::usage, {}, "--apply", "--apply STATS.h5 gives MNF features: add --features mnf:N"};
  if (job.features.kind == classify::FeatureSpec::Kind::mnf && !job.train_file.empty())
    return Error{ErrorKind::usage, {}, "--features",
                 "mnf:N needs --truth: the features of a training file are bands, not components"};
  return {};
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

// The split's files (--export-split, --save-training), written by the first rank.
Status write_split_files(const KnnJob& job, const RunReport& report, const io::CubeShape& shape,
                         const RankTraining& training, const classify::EvaluationTally& tally, const mpi::Comm& comm) {
  Status written;
  if (!job.export_split.empty()) {
    auto pixels = gathered(Result<std::vector<std::int64_t>>(tally.pixels()), comm);
    if (!pixels) return pixels.error();
    if (comm.is_root())
      written = write_split(job.export_split, report, shape, training.set.pixels, training.set.labels, *pixels);
  }
  if (!job.save_training.empty()) {
    auto rows = all_training_rows(training, comm);
    if (!rows) return rows.error();
    if (comm.is_root() && written.ok())
      written = classify::write_training_file(job.save_training,
                                              {*rows, training.set.features->dims(), training.set.labels,
                                               training.set.pixels, training.set.wavelength, &report.classes});
  }
  return mpi::agree(written, comm);
}

}  // namespace

std::int64_t job_tile_rows(const KnnJob& job, const io::CubeInfo& info, std::int64_t dims) {
  if (job.classify.tile_rows > 0) return job.classify.tile_rows;
  return tile_rows_for_budget(info, dims, job.classify.k, job.classify.neighbors, job.classify.tile_budget_bytes);
}

ReportPaths job_report_paths(const KnnJob& job) {
  const auto default_base = std::filesystem::path(job.output).replace_extension().string() + "_report";
  return report_paths(job.report.empty() ? default_base : job.report);
}

RunReport job_report(const KnnJob& job, const classify::TrainingSet& training, const io::Metadata& truth_meta,
                     std::int64_t training_rows) {
  RunReport report;
  report.scene = job.scene;
  report.truth = job.truth;
  report.training = job.train_file.empty() ? "truth raster" : job.train_file;
  report.features = classify::feature_spec_name(job.features);
  report.options = job.classify;
  report.split = job.split;
  report.split_from_truth = job.train_file.empty();
  report.training_rows = training_rows;
  report.classes = classify::complete_class_table(
      training.classes, std::max(training.class_count(), static_cast<int>(truth_meta.class_names.size())));
  return report;
}

Result<KnnJobResult> run_knn_job(const KnnJob& job, const ProgressFn& progress) {
  HB_TRY(check_job(job));
  const mpi::Comm comm = job.comm != nullptr ? *job.comm : mpi::Comm::world();
  if (job.features.kind == classify::FeatureSpec::Kind::mnf && job.features_scene.empty())
    return run_on_mnf_components(job, comm, progress);
  // The host passes below share this node's cores with its other ranks. The GPU is bound
  // after them, the training set's preparation included: binding waits for this rank's
  // CUDA context, which main's warm-up thread makes meanwhile (0.3 s of every two-GPU run
  // went to waiting for it here).
  share_host_threads(mpi::placement(comm).local_size);
  auto cube = io::open_cube(job.features_scene.empty() ? job.scene : job.features_scene);
  HB_TRY(mpi::agree(cube ? Status{} : Status{cube.error()}, comm));
  const auto& info = (*cube)->info();
  const auto& shape = info.shape;
  const classify::BandSelection selection = classify::select_good_bands(info);
  if (selection.dims() == 0) return bad_input(job.scene, "bbl", "every band is marked bad");
  const std::int64_t tile_rows = job_tile_rows(job, info, selection.dims());

  Stopwatch clock;
  auto truth = read_truth_share(job, shape, comm);
  if (!truth) return truth.error();
  const double truth_seconds = clock.lap();
  auto training = rank_training(job, **cube, selection, tile_rows, *truth, comm);
  if (!training) return training.error();
  const double training_seconds = clock.lap();
  if (job.classify.k > training->rows())
    return Error{ErrorKind::usage, {}, "-k",
                 fmt::format("k = {} but the training set has only {} rows", job.classify.k, training->rows())};
  auto search = searchable(*training, job, comm);  // host work while the CUDA context starts
  if (!search) return search.error();
  const double searchable_seconds = clock.lap();
  auto device = rank_device(job.classify.backend, comm);  // each rank's search on its own GPU
  if (!device) return device.error();
  const double device_seconds = clock.lap();
  size_chunks(*search, job, *device >= 0);

  KnnJobResult result;
  RunReport& report = result.report;
  report = job_report(job, training->set, truth->meta, training->rows());
  OutputRequest request{job.output, &info, job.scene, report.classes, job.classify.k, job.classify.neighbors,
                        fmt::format("hyperbatch knn of {} (k = {}, {}, {} weights)", job.scene, job.classify.k,
                                    metric_name(job.classify.metric), weights_name(job.classify.weights)),
                        &comm};
  auto outputs = create_knn_outputs(request);
  HB_TRY(mpi::agree(outputs ? Status{} : Status{outputs.error()}, comm));
  auto block = query_block(**cube, selection, tile_rows, training->valid, comm);
  if (!block) return block.error();
  HB_TRY(hold_truth_rows(*truth, *block, job.truth, shape, comm));
  const double blocks_seconds = clock.lap();
  spdlog::info("knn rank {}: truth {:.3f} s, training {:.3f} s, set-up and blocks {:.3f} s", comm.rank(),
               truth_seconds, training_seconds, device_seconds + searchable_seconds + blocks_seconds);
  spdlog::debug("knn rank {} set-up: training prepared for the search {:.3f} s, binding the device {:.3f} s, "
                "outputs and query blocks {:.3f} s", comm.rank(), searchable_seconds, device_seconds, blocks_seconds);

  // A training file's pixels are another scene's: every labelled pixel is evaluated.
  const auto& set = training->set;
  const std::span<const std::int64_t> drawn = job.train_file.empty() ? set.pixels : std::span<const std::int64_t>{};
  classify::EvaluationTally tally(truth->ids, truth->rows.begin * shape.samples, truth->top_class, drawn,
                                  static_cast<int>(report.classes.names.size()), shape.samples,
                                  !job.export_split.empty());
  const RowSink sink = [&](const ClassifiedRows& rows) -> Status {
    HB_TRY((*outputs)->write(rows));
    tally.add(rows.rows, rows.labels, rows.classified);
    return {};
  };
  const BlockInput in{&**cube, &selection, set.labels, set.class_count(), search->shift, *block,
                      progress, (*outputs)->sink_thread()};
  auto stats = classify_block(in, *search->chunks, job.classify, sink, comm);
  if (!stats) return stats.error();
  spdlog::info("knn: classification pass {:.3f} s; dedup {}: ran on {} of {} tiles, {} of {} classified pixels were "
               "duplicates", clock.lap(), dedup::mode_name(job.classify.dedup), stats->deduped_tiles, stats->tiles,
               stats->duplicates, stats->classified);
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
  HB_TRY(write_split_files(job, report, shape, *training, tally, comm));
  return result;
}

}  // namespace hb::knn
