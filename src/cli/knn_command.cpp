// hyperbatch knn: classify a scene by its k nearest labelled spectra.
#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <cmath>
#include <filesystem>

#include "mpi/agree.hpp"
#include "mpi/comm.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/ortho_after.hpp"
#include "src/cli/progress.hpp"
#include "src/cli/validators.hpp"
#include "src/knn/run.hpp"

namespace hb::cli {
namespace {

struct KnnCliOptions {
  knn::KnnJob job;
  std::optional<double> fraction;
  std::optional<std::int64_t> per_class;
  std::string metric = "euclidean";
  std::string select = "auto";
  std::string weights = "uniform";
  std::string features = "bands";
  std::string backend = "auto";
  std::string units = "physical";
  MaskOptions mask;
  std::string dedup = "auto";
  std::string shard_mode = "auto";
  std::string ortho;  // --ortho GLT
  bool json = false;
};

Status to_job(KnnCliOptions& o) {
  auto& job = o.job;
  job.split.fraction = o.fraction;
  job.split.per_class = o.per_class;
  if (!job.truth.empty() && job.train_file.empty() && !o.fraction && !o.per_class)
    return Error{ErrorKind::usage, {}, "--train-fraction", "with --truth, give --train-fraction or --train-per-class"};
  job.classify.metric = *knn::metric_from_name(o.metric);
  job.classify.select = *knn::select_method_from_name(o.select);
  job.classify.weights = *knn::weights_from_name(o.weights);
  job.classify.backend = *backend_kind_from_name(o.backend);
  job.classify.dedup = *dedup::mode_from_name(o.dedup);
  job.shard_mode = o.shard_mode == "ring"        ? knn::ShardMode::ring
                   : o.shard_mode == "allgather" ? knn::ShardMode::allgather
                                                 : knn::ShardMode::automatic;
  auto features = classify::parse_feature_spec(o.features);
  if (!features) return features.error();
  job.features = *features;
  return {};
}

void print_summary(const knn::KnnJobResult& r, bool json) {
  if (json) {
    auto j = knn::report_json(r.report);
    if (r.report_paths) j["report_files"] = {r.report_paths->json, r.report_paths->markdown};
    fmt::print("{}\n", j.dump(2));
    return;
  }
  for (const auto& path : r.report.outputs) fmt::print("wrote   {}\n", path);
  if (r.report_paths) fmt::print("report  {}\n        {}\n", r.report_paths->json, r.report_paths->markdown);
  fmt::print("select  {} ({} backend), {} pixels classified, {} ignored\n",
             knn::select_method_name(r.report.stats.select), r.report.stats.backend, r.report.stats.classified,
             r.report.stats.ignored);
  if (r.report.matrix) {
    const auto s = classify::summarize(*r.report.matrix);
    fmt::print("overall accuracy {:.2f} %, kappa {:.4f} on {} evaluation pixels\n", 100.0 * s.overall, s.kappa,
               s.total);
  }
}

// --ortho: the class map and its confidence onto the grid; reports, the split and the
// training file stay in the scene's geometry under the names they have without it.
Result<knn::KnnJobResult> classify_onto_grid(const KnnCliOptions& o, const knn::ProgressFn& progress) {
  const knn::KnnJob& job = o.job;
  OrthoOutputs out;
  out.glt = o.ortho;
  out.scene = job.scene;
  out.output = job.output;
  out.auxiliary = {{"confidence", "_confidence"}};
  out.reads = {{"--truth", job.truth}, {"--train", job.train_file}, {"--apply", job.mnf_stats}};
  out.kept = {{"--export-split", job.export_split}, {"--save-training", job.save_training}};
  knn::KnnJob on_temporary = job;
  if (!job.truth.empty()) {
    if (on_temporary.report.empty())
      on_temporary.report = std::filesystem::path(job.output).replace_extension().string() + "_report";
    const auto reports = knn::job_report_paths(on_temporary);
    out.kept.insert(out.kept.end(), {{"--report", reports.json}, {"--report", reports.markdown}});
  }
  out.backend = job.classify.backend;
  Result<knn::KnnJobResult> classified = Error{ErrorKind::internal, job.output, "", "not classified"};
  auto written = run_onto_grid(
      out,
      [&](const OrthoTemporaries& t) -> Status {
        on_temporary.output = t.output;
        classified = knn::run_knn_job(on_temporary, progress);
        return classified ? Status{} : Status{classified.error()};
      },
      mpi::Comm::world());
  if (!written) return written.error();
  classified->report.outputs = *written;
  // The reports were written naming the temporaries: again, naming the outputs on the grid.
  const mpi::Comm world = mpi::Comm::world();
  Status rewritten;
  if (classified->report_paths && world.is_root())
    rewritten = knn::write_reports(classified->report, *classified->report_paths);
  HB_TRY(mpi::agree(rewritten, world));
  return classified;
}

}  // namespace

Registered register_knn(CLI::App& root) {
  auto o = std::make_shared<KnnCliOptions>();
  auto& job = o->job;
  auto* app = root.add_subcommand("knn", "Classify a scene with k nearest neighbours of labelled spectra");
  app->add_option("scene", job.scene, "Scene to classify (ENVI or HDF5 cube)")->required();
  auto* truth = app->add_option("--truth", job.truth, "Class raster aligned with the scene (0 = unlabelled)");
  auto* train = app->add_option("--train", job.train_file, "HDF5 training file (/train/features, /train/labels)");
  truth->check(accepts::existing_file());
  train->check(accepts::existing_file());
  app->add_option("-k", job.classify.k, "Neighbours that vote")->required()->check(accepts::positive_integer(1 << 20));
  app->add_option("-o,--output", job.output, "Class map to write (ENVI header or .h5)")->required();
  auto* fraction = app->add_option("--train-fraction", o->fraction, "Fraction of each class used for training")
                       ->check(accepts::number_in(0.0, 1.0));
  auto* per_class = app->add_option("--train-per-class", o->per_class, "Training pixels per class")
                        ->check(accepts::positive_integer());
  fraction->excludes(per_class);
  fraction->excludes(train);
  per_class->excludes(train);
  app->add_option("--seed", job.split.seed, "Seed of the stratified draw")->check(accepts::unsigned_integer());
  app->add_option("--metric", o->metric, "Distance")->check(accepts::one_of({"euclidean", "cosine"}));
  app->add_option("--select", o->select, "k-selection method")->check(accepts::one_of({"auto", "kmin", "bitonic", "fast", "tensor"}));
  app->add_option("--weights", o->weights, "Vote weights")->check(accepts::one_of({"uniform", "distance"}));
  app->add_option("--features", o->features, "Features: bands (bad bands dropped) or mnf:N");
  app->add_option("--apply", job.mnf_stats, "With mnf:N: apply the MNF basis of this statistics file")
      ->check(accepts::existing_file());
  app->add_option("--tile-rows", job.classify.tile_rows, "Scene rows per tile (0 = from a memory budget)")
      ->check(accepts::non_negative_integer());
  app->add_option("--shard-mode", o->shard_mode, "Several ranks: training shards go round a ring or are allgathered")
      ->check(accepts::one_of({"auto", "ring", "allgather"}));
  app->add_option("--train-chunk-rows", job.train_chunk_rows,
                  "Training rows per search chunk (default 8192 on the CPU, 131072 on a GPU)")
      ->check(accepts::positive_integer());
  app->add_option("--backend", o->backend, "Where the search runs")->check(accepts::one_of({"auto", "cpu", "cuda"}));
  add_mask_options(*app, o->mask);
  add_units_option(*app, o->units, "Scenes with a scaling (gain/offset, .gain file): physical values or the stored numbers");
  app->add_option("--dedup", o->dedup,
                  "Search each distinct spectrum once (auto: while a tile's duplicate share is >= 1 %)")
      ->check(accepts::one_of({"auto", "on", "off"}));
  auto* neighbors =
      app->add_flag("--neighbors", job.classify.neighbors, "Also write each pixel's neighbour indices and distances");
  add_ortho_option(*app, o->ortho)->excludes(neighbors);
  app->add_option("--report", job.report, "Accuracy report base name (writes .json and .md)");
  app->add_option("--export-split", job.export_split, "Write the training/evaluation pixel split as JSON");
  app->add_option("--save-training", job.save_training, "Write the drawn training rows as an HDF5 training file");
  app->add_flag("--json", o->json, "Print the run summary as JSON");
  return {app, [o]() -> Status {
            HB_TRY(to_job(*o));
            use_units(o->units);
            HB_TRY(use_mask(o->job.scene, o->mask, o->job.output));
            ProgressReporter progress("knn", "rows", true);
            const auto report = [&](std::int64_t done, std::int64_t total) { progress.update(done, total); };
            auto result = o->ortho.empty() ? knn::run_knn_job(o->job, report) : classify_onto_grid(*o, report);
            if (!result) return result.error();
            progress.finish();
            if (mpi::Comm::world().is_root()) print_summary(*result, o->json);
            return {};
          },
          Ranks::every};
}

}  // namespace hb::cli
