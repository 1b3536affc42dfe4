#include "src/knn/run.hpp"

#include <spdlog/spdlog.h>

#include <fmt/core.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <type_traits>
#include <utility>

#include "io/file_identity.hpp"
#include "src/base/parallel_for.hpp"
#include "src/classify/class_raster.hpp"
#include "src/classify/evaluation.hpp"
#include "src/classify/scene_pass.hpp"
#include "src/classify/training_file.hpp"
#include "src/knn/mnf_features.hpp"
#include "src/knn/outputs.hpp"

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

// What the scene passes need: the scene, its feature bands, a tile height.
struct SceneContext {
  std::unique_ptr<io::Cube> cube;
  classify::BandSelection selection;
  std::int64_t tile_rows = 1;
};

Result<classify::TrainingSet> draw_from_truth(const KnnJob& job, SceneContext& s,
                                              const std::vector<std::uint16_t>& truth, const io::Metadata& truth_meta) {
  auto train = classify::training_pixels(
      truth, job.split,
      [&](std::span<const std::int64_t> pixels) {
        return classify::pixel_validity(*s.cube, s.selection, pixels, s.tile_rows);
      },
      [&] { return classify::validity_mask(*s.cube, s.selection, s.tile_rows); });
  if (!train) return train.error();
  if (train->empty()) return bad_input(job.truth, "data", "no labelled pixel with usable scene data");
  auto features = classify::gather_features(*s.cube, s.selection, *train, s.tile_rows);
  if (!features) return features.error();
  classify::TrainingSet training;
  training.features = classify::memory_training_source(std::move(*features), s.selection.dims(), job.scene);
  for (const auto p : *train) training.labels.push_back(truth[static_cast<std::size_t>(p)]);
  training.pixels = std::move(*train);
  training.wavelength = s.selection.wavelength;
  training.classes = {truth_meta.class_names, truth_meta.class_lookup};
  return training;
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
  if (const auto ranks = job.comm != nullptr ? *job.comm : mpi::Comm::world(); ranks.is_parallel())
    return run_knn_job_ranks(job, ranks, progress);
  if (job.features.kind == classify::FeatureSpec::Kind::mnf && job.features_scene.empty())
    return run_on_mnf_components(job, progress);
  SceneContext s;
  auto cube = io::open_cube(job.features_scene.empty() ? job.scene : job.features_scene);
  if (!cube) return cube.error();
  s.cube = std::move(*cube);
  const auto& shape = s.cube->info().shape;
  s.selection = classify::select_good_bands(s.cube->info());
  if (s.selection.dims() == 0) return bad_input(job.scene, "bbl", "every band is marked bad");
  s.tile_rows = job_tile_rows(job, s.cube->info(), s.selection.dims());

  // Truth, validity, split (or the training file).
  auto clock = std::chrono::steady_clock::now();
  const auto lap = [&clock] {
    const auto now = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(now - std::exchange(clock, now)).count();
  };
  std::vector<std::uint16_t> truth;
  io::Metadata truth_meta;
  if (!job.truth.empty()) {
    auto truth_cube = io::open_cube(job.truth);
    if (!truth_cube) return truth_cube.error();
    auto ids = classify::read_class_raster(**truth_cube, shape);
    if (!ids) return ids.error();
    truth = std::move(*ids);
    truth_meta = (*truth_cube)->info().meta;
    spdlog::info("knn: truth read {:.3f} s", lap());
  }
  classify::TrainingSet training;
  if (job.train_file.empty()) {
    auto drawn = draw_from_truth(job, s, truth, truth_meta);
    if (!drawn) return drawn.error();
    training = std::move(*drawn);
    spdlog::info("knn: split and training features {:.3f} s", lap());
  } else {
    auto t = classify::read_training_file(job.train_file);
    if (!t) return t.error();
    training = std::move(*t);
    if (training.classes.names.empty()) training.classes = {truth_meta.class_names, truth_meta.class_lookup};
  }
  HB_TRY(classify::check_compatible(training, s.selection, job.scene));
  spdlog::info("knn: {} training rows, {} features", training.count(), s.selection.dims());

  auto prepared = PreparedTraining::prepare(*training.features, job.classify.metric, job.train_chunk_rows,
                                            job.train_cache_bytes);
  if (!prepared) return prepared.error();
  if (job.classify.k > prepared->count())
    return Error{ErrorKind::usage, {}, "-k",
                 fmt::format("k = {} but the training set has only {} rows", job.classify.k, prepared->count())};

  KnnJobResult result;
  RunReport& report = result.report;
  report = job_report(job, training, truth_meta, training.count());

  OutputRequest request{job.output, &s.cube->info(), job.scene, report.classes, job.classify.k, job.classify.neighbors,
                        fmt::format("hyperbatch knn of {} (k = {}, {}, {} weights)", job.scene, job.classify.k,
                                    metric_name(job.classify.metric), weights_name(job.classify.weights))};
  auto outputs = create_knn_outputs(request);
  if (!outputs) return outputs.error();

  // Confusion matrix over the evaluation pixels, filled as rows come out.
  // A training file's pixels are another scene's: every labelled pixel is evaluated.
  const std::span<const std::int64_t> drawn = job.train_file.empty() ? training.pixels : std::span<const std::int64_t>{};
  classify::EvaluationTally tally(truth, drawn, static_cast<int>(report.classes.names.size()), shape.samples,
                                  !job.export_split.empty());
  const RowSink sink = [&](const ClassifiedRows& rows) -> Status {
    HB_TRY((*outputs)->write(rows));
    tally.add(rows.rows, rows.labels, rows.classified);
    return {};
  };
  lap();
  auto stats = classify_scene(*s.cube, s.selection, training, *prepared, job.classify, sink, progress,
                              (*outputs)->sink_thread());
  if (!stats) return stats.error();
  spdlog::info("knn: classification pass {:.3f} s ({} evaluation pixels)", lap(), tally.matrix().total());
  spdlog::info("knn: dedup {}: ran on {} of {} tiles, {} of {} classified pixels were duplicates ({:.1f} %)",
               dedup::mode_name(job.classify.dedup), stats->deduped_tiles, stats->tiles, stats->duplicates,
               stats->classified, stats->classified ? 100.0 * double(stats->duplicates) / double(stats->classified) : 0.0);
  HB_TRY((*outputs)->commit());
  spdlog::info("knn: outputs committed {:.3f} s", lap());
  report.stats = *stats;
  report.outputs = (*outputs)->paths();
  if (tally.matrix().total() > 0) report.matrix = tally.matrix();

  if (report.matrix || !job.report.empty()) {
    result.report_paths = job_report_paths(job);
    HB_TRY(write_reports(report, *result.report_paths));
  }
  if (!job.export_split.empty())
    HB_TRY(write_split(job.export_split, report, shape, training.pixels, training.labels, tally.pixels()));
  if (!job.save_training.empty()) {
    std::vector<float> rows(static_cast<std::size_t>(training.count() * training.features->dims()));
    HB_TRY(training.features->read(0, training.count(), rows.data()));
    HB_TRY(classify::write_training_file(job.save_training, {rows, training.features->dims(), training.labels,
                                                             training.pixels, training.wavelength, &report.classes}));
  }
  return result;
}

}  // namespace hb::knn
