#include "src/knn/run.hpp"

#include <spdlog/spdlog.h>

#include <fmt/core.h>

#include <chrono>
#include <filesystem>
#include <utility>

#include "src/knn/mnf_features.hpp"
#include "src/knn/outputs.hpp"
#include "src/knn/scene_pass.hpp"
#include "src/knn/training_file.hpp"

namespace hb::knn {
namespace {

Status check_job(const KnnJob& job) {
  if (job.truth.empty() && job.train_file.empty())
    return Error{ErrorKind::usage, {}, "--truth", "give --truth RASTER (with a split) or --train FILE.h5"};
  if (!job.train_file.empty() && (job.split.fraction || job.split.per_class))
    return Error{ErrorKind::usage, {}, "--train", "--train-fraction/--train-per-class need --truth without --train"};
  if (!job.mnf_stats.empty() && job.features.kind != FeatureSpec::Kind::mnf)
    return Error{ErrorKind::usage, {}, "--apply", "--apply STATS.h5 gives MNF features: add --features mnf:N"};
  if (job.features.kind == FeatureSpec::Kind::mnf && !job.train_file.empty())
    return Error{ErrorKind::usage, {}, "--features",
                 "mnf:N needs --truth: the features of a training file are bands, not components"};
  return {};
}

// What the scene passes need: the scene, its feature bands, a tile height.
struct SceneContext {
  std::unique_ptr<io::Cube> cube;
  BandSelection selection;
  std::int64_t tile_rows = 1;
};

// The truth-drawn training set and the evaluation pixels.
struct Drawn {
  TrainingSet training;
  std::vector<std::int64_t> eval;
};

Result<Drawn> draw_from_truth(const KnnJob& job, SceneContext& s, const std::vector<std::uint16_t>& truth,
                              const std::vector<std::uint8_t>& valid, const io::Metadata& truth_meta) {
  auto split = stratified_split(truth, valid, job.split);
  if (!split) return split.error();
  if (split->train.empty()) return bad_input(job.truth, "data", "no labelled pixel with usable scene data");
  auto features = gather_features(*s.cube, s.selection, split->train, s.tile_rows);
  if (!features) return features.error();
  Drawn d;
  d.training.features = memory_training_source(std::move(*features), s.selection.dims(), job.scene);
  for (const auto p : split->train) d.training.labels.push_back(truth[static_cast<std::size_t>(p)]);
  d.training.pixels = split->train;
  d.training.wavelength = s.selection.wavelength;
  d.training.classes = {truth_meta.class_names, truth_meta.class_lookup};
  d.eval = std::move(split->eval);
  return d;
}

}  // namespace

std::int64_t job_tile_rows(const KnnJob& job, const io::CubeInfo& info, std::int64_t dims) {
  if (job.classify.tile_rows > 0) return job.classify.tile_rows;
  return tile_rows_for_budget(info, dims, job.classify.k, job.classify.neighbors, job.classify.memory_bytes);
}

RunReport job_report(const KnnJob& job, const TrainingSet& training, const io::Metadata& truth_meta,
                     std::int64_t training_rows) {
  RunReport report;
  report.scene = job.scene;
  report.truth = job.truth;
  report.training = job.train_file.empty() ? "truth raster" : job.train_file;
  report.features = feature_spec_name(job.features);
  report.options = job.classify;
  report.split = job.split;
  report.split_from_truth = job.train_file.empty();
  report.training_rows = training_rows;
  report.classes = complete_class_table(training.classes, std::max(training.class_count(),
                                                                   static_cast<int>(truth_meta.class_names.size())));
  return report;
}

Result<std::vector<std::uint16_t>> read_class_raster(const io::Cube& truth, const io::CubeShape& scene_shape) {
  const auto& info = truth.info();
  if (info.shape.bands != 1) return bad_input(truth.path(), "bands", "a class raster has exactly one band");
  if (info.shape.lines != scene_shape.lines)
    return bad_input(truth.path(), "lines", fmt::format("{} lines, the scene has {}", info.shape.lines, scene_shape.lines));
  if (info.shape.samples != scene_shape.samples)
    return bad_input(truth.path(), "samples",
                     fmt::format("{} samples, the scene has {}", info.shape.samples, scene_shape.samples));
  if (!io::is_integer(info.type)) return bad_input(truth.path(), "data type", "class ids must be integers");
  std::vector<std::byte> raw(static_cast<std::size_t>(info.total_bytes()));
  HB_TRY(truth.read_rows({0, info.shape.lines}, raw));
  std::vector<std::uint16_t> ids(static_cast<std::size_t>(info.shape.pixels()));
  bool ok = true;
  io::visit_data_type(info.type, [&](auto zero) {
    using T = decltype(zero);
    const auto* values = reinterpret_cast<const T*>(raw.data());
    for (std::size_t p = 0; p < ids.size(); ++p) {
      const auto v = static_cast<long double>(values[p]);
      ok = ok && v >= 0 && v <= 65535;
      ids[p] = static_cast<std::uint16_t>(values[p]);
    }
  });
  if (!ok) return bad_input(truth.path(), "data", "class ids must be in 0..65535");
  return ids;
}

Result<KnnJobResult> run_knn_job(const KnnJob& job, const ProgressFn& progress) {
  HB_TRY(check_job(job));
  if (const auto ranks = job.comm != nullptr ? *job.comm : mpi::Comm::world(); ranks.is_parallel())
    return run_knn_job_ranks(job, ranks);
  if (job.features.kind == FeatureSpec::Kind::mnf && job.features_scene.empty())
    return run_on_mnf_components(job, progress);
  SceneContext s;
  auto cube = io::open_cube(job.features_scene.empty() ? job.scene : job.features_scene);
  if (!cube) return cube.error();
  s.cube = std::move(*cube);
  const auto& shape = s.cube->info().shape;
  s.selection = select_good_bands(s.cube->info());
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
  std::vector<std::uint8_t> valid;
  if (!job.truth.empty()) {
    auto truth_cube = io::open_cube(job.truth);
    if (!truth_cube) return truth_cube.error();
    auto ids = read_class_raster(**truth_cube, shape);
    if (!ids) return ids.error();
    truth = std::move(*ids);
    truth_meta = (*truth_cube)->info().meta;
    auto mask = validity_mask(*s.cube, s.selection, s.tile_rows);
    if (!mask) return mask.error();
    valid = std::move(*mask);
    spdlog::info("knn: truth and validity pass {:.3f} s", lap());
  }
  Drawn drawn;
  if (job.train_file.empty()) {
    auto d = draw_from_truth(job, s, truth, valid, truth_meta);
    if (!d) return d.error();
    drawn = std::move(*d);
    spdlog::info("knn: split and training features {:.3f} s", lap());
  } else {
    auto t = read_training_file(job.train_file);
    if (!t) return t.error();
    drawn.training = std::move(*t);
    if (drawn.training.classes.names.empty()) drawn.training.classes = {truth_meta.class_names, truth_meta.class_lookup};
    if (!truth.empty()) drawn.eval = labelled_pixels(truth, valid);
  }
  TrainingSet& training = drawn.training;
  HB_TRY(check_compatible(training, s.selection, job.scene));
  spdlog::info("knn: {} training rows, {} features, {} evaluation pixels", training.count(), s.selection.dims(),
               drawn.eval.size());

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
  int max_truth = 0;
  for (const auto p : drawn.eval) max_truth = std::max<int>(max_truth, truth[static_cast<std::size_t>(p)]);
  ConfusionMatrix matrix(std::max(static_cast<int>(report.classes.names.size()), max_truth + 1));
  std::size_t next_eval = 0;
  const RowSink sink = [&](const ClassifiedRows& rows) -> Status {
    HB_TRY((*outputs)->write(rows));
    const std::int64_t first = rows.rows.begin * shape.samples;
    const std::int64_t end = rows.rows.end * shape.samples;
    for (; next_eval < drawn.eval.size() && drawn.eval[next_eval] < end; ++next_eval) {
      const auto p = drawn.eval[next_eval];
      matrix.add(truth[static_cast<std::size_t>(p)], rows.labels[static_cast<std::size_t>(p - first)]);
    }
    return {};
  };
  lap();
  auto stats = classify_scene(*s.cube, s.selection, training, *prepared, job.classify, sink, progress);
  if (!stats) return stats.error();
  spdlog::info("knn: classification pass {:.3f} s", lap());
  spdlog::info("knn: dedup {}: ran on {} of {} tiles, {} of {} classified pixels were duplicates ({:.1f} %)",
               dedup::mode_name(job.classify.dedup), stats->deduped_tiles, stats->tiles, stats->duplicates,
               stats->classified, stats->classified ? 100.0 * double(stats->duplicates) / double(stats->classified) : 0.0);
  HB_TRY((*outputs)->commit());
  spdlog::info("knn: outputs committed {:.3f} s", lap());
  report.stats = *stats;
  report.outputs = (*outputs)->paths();
  if (!drawn.eval.empty()) report.matrix = matrix;

  if (report.matrix || !job.report.empty()) {
    const auto default_base = std::filesystem::path(job.output).replace_extension().string() + "_report";
    result.report_paths = report_paths(job.report.empty() ? default_base : job.report);
    HB_TRY(write_reports(report, *result.report_paths));
  }
  if (!job.export_split.empty())
    HB_TRY(write_split(job.export_split, report, shape, training.pixels, training.labels, drawn.eval));
  if (!job.save_training.empty()) {
    std::vector<float> rows(static_cast<std::size_t>(training.count() * training.features->dims()));
    HB_TRY(training.features->read(0, training.count(), rows.data()));
    HB_TRY(write_training_file(job.save_training, {rows, training.features->dims(), training.labels, training.pixels,
                                                   training.wavelength, &report.classes}));
  }
  return result;
}

}  // namespace hb::knn
