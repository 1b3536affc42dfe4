// hyperbatch sam: classify a scene by its best-matching reference spectrum (spectral
// angle or spectral correlation).
#include <fmt/core.h>

#include "mpi/comm.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/ortho_after.hpp"
#include "src/cli/validators.hpp"
#include "src/cli/progress.hpp"
#include "src/sam/run.hpp"

namespace hb::cli {
namespace {

struct SamCliOptions {
  sam::SamJob job;
  std::string method = "sam";
  std::string backend = "auto";
  std::string units = "physical";
  MaskOptions mask;
  std::string formulation = "auto";
  std::string dedup = "auto";
  std::string resample = "auto";
  std::string ortho;  // --ortho GLT
};

void print_summary(const sam::SamResult& r) {
  for (const auto& path : r.outputs) fmt::print("wrote   {}\n", path);
  fmt::print("library {} spectra on {} scene bands ({}{})\n", r.references, r.bands, r.resampling,
             r.excluded_bands.empty() ? "" : fmt::format(", bands {} not covered", sam::band_list(r.excluded_bands)));
  fmt::print("scored  on {} ({}): {} pixels classified, {} below the threshold, {} ignored, {:.3f} s\n", r.backend,
             r.formulation, r.classified, r.below_threshold, r.ignored, r.seconds);
}

// --ortho: the class map, its scores and --rules onto the grid; --save-library stays.
Result<sam::SamResult> classify_onto_grid(const SamCliOptions& o, const sam::ProgressFn& progress) {
  const sam::SamJob& job = o.job;
  OrthoOutputs out;
  out.glt = o.ortho;
  out.scene = job.scene;
  out.output = job.output;
  out.auxiliary = {{"score", "_score"}};
  if (!job.rules.empty()) out.more = {{"--rules", job.rules}};
  out.reads = {{"--library", job.library}, {"--truth", job.truth}, {"--train", job.train_file}};
  out.kept = {{"--save-library", job.save_library}};
  out.backend = job.backend;
  Result<sam::SamResult> classified = Error{ErrorKind::internal, job.output, "", "not classified"};
  auto written = run_onto_grid(
      out,
      [&](const OrthoTemporaries& t) -> Status {
        sam::SamJob on_temporary = job;
        on_temporary.output = t.output;
        if (!t.more.empty()) on_temporary.rules = t.more.front();
        classified = sam::run(on_temporary, progress);
        return classified ? Status{} : Status{classified.error()};
      },
      mpi::Comm::world());
  if (!written) return written.error();
  classified->outputs = *written;
  return classified;
}

}  // namespace

Registered register_sam(CLI::App& root) {
  auto o = std::make_shared<SamCliOptions>();
  auto& job = o->job;
  auto* app = root.add_subcommand("sam", "Classify a scene by spectral angle (SAM) or correlation (SCM) to reference spectra");
  app->add_option("scene", job.scene, "Scene to classify (ENVI or HDF5 cube)")->required();
  auto* library = app->add_option("--library", job.library, "ENVI spectral library (.sli/.hdr) or HDF5 file with /library");
  auto* truth = app->add_option("--truth", job.truth, "Class raster over the scene: its class means are the references");
  auto* train = app->add_option("--train", job.train_file, "KNN training file (HDF5): its class means are the references");
  library->check(accepts::existing_file());
  truth->check(accepts::existing_file());
  train->check(accepts::existing_file());
  library->excludes(truth)->excludes(train);
  truth->excludes(train);
  app->add_option("-o,--output", job.output, "Class map to write (ENVI header or .h5)")->required();
  app->add_option("--method", o->method, "sam: spectral angle; scm: spectral correlation")
      ->check(accepts::one_of({"sam", "scm"}));
  auto* angle = app->add_option("--max-angle", job.max_angle, "SAM: leave pixels whose best angle exceeds this (radians) unclassified")
                    ->check(accepts::number_in(0.0, 3.1415926535897932));
  auto* corr = app->add_option("--min-correlation", job.min_correlation,
                               "SCM: leave pixels whose best correlation is below this unclassified")
                   ->check(accepts::number_in(-1.0, 1.0));
  angle->excludes(corr);
  app->add_option("--rules", job.rules, "Write every per-class score (angles or correlations) to this cube");
  app->add_option("--save-library", job.save_library, "Write the library as compared (resampled) to this HDF5 file");
  app->add_option("--resample", o->resample, "Library to scene bands: auto, linear or gaussian")
      ->check(accepts::one_of({"auto", "linear", "gaussian"}));
  app->add_option("--backend", o->backend, "Where scoring runs")->check(accepts::one_of({"auto", "cpu", "cuda"}));
  add_mask_options(*app, o->mask);
  add_units_option(*app, o->units, "Scenes with a scaling (gain/offset, .gain file): physical values or the stored numbers");
  app->add_option("--formulation", o->formulation, "CUDA: direct kernel, DGEMM, or auto by library size")
      ->check(accepts::one_of({"auto", "direct", "gemm"}));
  app->add_option("--dedup", o->dedup, "Score each distinct spectrum of a tile once: auto (while it pays), on, off")
      ->check(accepts::one_of({"auto", "on", "off"}));
  app->add_option("--tile-rows", job.tile_rows, "Scene rows per tile (0 = from a memory budget)")
      ->check(accepts::non_negative_integer());
  add_ortho_option(*app, o->ortho);
  return {app, [o]() -> Status {
            o->job.method = *sam::method_from_name(o->method);
            use_units(o->units);
            HB_TRY(use_mask(o->job.scene, o->mask, o->job.output));
            o->job.backend = *backend_kind_from_name(o->backend);
            o->job.formulation = *sam::formulation_from_name(o->formulation);
            o->job.dedup = *dedup::mode_from_name(o->dedup);
            o->job.resampling = o->resample == "linear"     ? sam::Resampling::linear
                                : o->resample == "gaussian" ? sam::Resampling::gaussian
                                                            : sam::Resampling::automatic;
            ProgressReporter progress("sam", "rows", true);
            const auto report = [&](std::int64_t done, std::int64_t total) { progress.update(done, total); };
            auto result = o->ortho.empty() ? sam::run(o->job, report) : classify_onto_grid(*o, report);
            if (!result) return result.error();
            progress.finish();
            if (mpi::Comm::world().is_root()) print_summary(*result);
            return {};
          },
          Ranks::every};
}

}  // namespace hb::cli
