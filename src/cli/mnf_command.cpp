// hyperbatch mnf / pca SCENE -o OUT: noise-adjusted or plain principal components,
// streamed tile by tile (see src/mnf/run.hpp).
#include <memory>

#include "io/resample_view.hpp"
#include "mpi/comm.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/ortho_after.hpp"
#include "src/cli/validators.hpp"
#include "src/mnf/noise_estimators.hpp"
#include "src/mnf/run.hpp"

namespace hb::cli {
namespace {

struct ReduceOptions {
  mnf::RunOptions run;
  std::string noise = "diff";
  std::string subset;
  std::string backend = "auto";
  std::string units = "physical";
  std::string resample_to;  // campaign only: every scene on this scene's bands
  MaskOptions mask;
  std::vector<std::string> scenes;
  std::int64_t components = 0;
  double snr = 0.0;
  double variance = 0.0;
  std::string ortho;  // --ortho GLT
  // Set by register_reduce; --snr exists for MNF only.
  CLI::Option* components_option = nullptr;
  CLI::Option* snr_option = nullptr;
  CLI::Option* variance_option = nullptr;
};

// "Noise estimator" and one line per estimator of the registry.
std::string noise_help() {
  std::string help = "Noise estimator";
  for (const auto& e : mnf::noise_estimators()) help += "\n  " + std::string(e.name) + ": " + std::string(e.description);
  return help;
}

bool given(const CLI::Option* option) { return option != nullptr && option->count() > 0; }

// --ortho: the components (and --denoise) onto the grid; the statistics stay as they are.
Status reduce_onto_grid(const ReduceOptions& o) {
  OrthoOutputs out;
  out.glt = o.ortho;
  out.scene = o.run.scene;
  out.output = o.run.output;
  if (!o.run.denoise_output.empty()) out.more = {{"--denoise", o.run.denoise_output}};
  out.statistics = true;
  out.reads = {{"--apply", o.run.apply_stats}};
  out.backend = o.run.backend;
  auto written = run_onto_grid(
      out,
      [&](const OrthoTemporaries& t) {
        mnf::RunOptions on_temporary = o.run;
        on_temporary.output = t.output;
        if (!t.more.empty()) on_temporary.denoise_output = t.more.front();
        return mnf::run(on_temporary, mpi::Comm::world());
      },
      mpi::Comm::world());
  return written ? Status{} : Status{written.error()};
}

// --resample-to: a campaign basis (--stats-only over several scenes) or a basis
// applied (--apply) on the target's bands; open_cube reads every scene resampled.
Status use_band_target(const ReduceOptions& o) {
  if (o.resample_to.empty()) return {};
  if (!(o.run.stats_only && !o.run.more_scenes.empty()) && o.run.apply_stats.empty())
    return Error{ErrorKind::usage, {}, "--resample-to",
                 "needs --stats-only with two or more scenes (a campaign basis) or --apply"};
  if (o.resample_to == o.run.output) return Error{ErrorKind::usage, {}, "--resample-to", "names the output file"};
  for (const auto& scene : o.scenes) io::set_scene_band_target(scene, o.resample_to);
  return {};
}

Status execute(ReduceOptions& o) {
  o.run.scene = o.scenes.front();
  o.run.more_scenes.assign(o.scenes.begin() + 1, o.scenes.end());
  o.run.pipeline.estimator = *mnf::noise_estimator_from_name(o.noise);
  o.run.backend = *backend_kind_from_name(o.backend);
  use_units(o.units);
  HB_TRY(use_band_target(o));
  HB_TRY(use_mask(o.run.scene, o.mask, o.run.output));
  if (!o.subset.empty()) {
    auto window = mnf::parse_window(o.subset);
    if (!window) return window.error();
    o.run.pipeline.noise_window = *window;
  }
  if (given(o.components_option)) o.run.selection.components = o.components;
  if (given(o.snr_option)) o.run.selection.snr = o.snr;
  if (given(o.variance_option)) o.run.selection.variance = o.variance;
  if (o.ortho.empty()) return mnf::run(o.run, mpi::Comm::world());
  return reduce_onto_grid(o);
}

Registered register_reduce(CLI::App& root, mnf::Method method) {
  const bool is_mnf = method == mnf::Method::mnf;
  auto o = std::make_shared<ReduceOptions>();
  o->run.pipeline.method = method;
  auto* app = root.add_subcommand(
      is_mnf ? "mnf" : "pca",
      is_mnf ? "Minimum noise fraction: components ordered by signal-to-noise ratio"
             : "Principal components: components ordered by variance");
  app->add_option("scene", o->scenes,
                  "ENVI header/data file or HDF5 cube; with --stats-only, several scenes give one basis for all")
      ->required();
  app->add_option("-o,--output", o->run.output,
                  "Components: NAME.h5 (statistics in the same file) or NAME.hdr (statistics in NAME.stats.h5)")
      ->required();
  auto* count = app->add_option("--components", o->components, "Keep the first N components")
                    ->check(accepts::positive_integer());
  auto* variance = app->add_option("--variance", o->variance, "Keep components up to this fraction of the eigenvalue sum")
                       ->check(accepts::number_in(0.0, 1.0));
  count->excludes(variance);
  o->components_option = count;
  o->variance_option = variance;
  if (is_mnf) {
    app->add_option("--noise", o->noise, noise_help())->check(accepts::one_of(mnf::noise_estimator_names()));
    auto* snr = app->add_option("--snr", o->snr, "Keep components with SNR >= X (eigenvalue >= X + 1)")
                    ->check(accepts::any_number());
    snr->excludes(count)->excludes(variance);
    o->snr_option = snr;
    app->add_option("--subset", o->subset, "Noise statistics from rows r0:r1 and columns c0:c1 only");
    app->add_option("--denoise", o->run.denoise_output, "Also write the scene denoised with the kept components");
  }
  auto* stats_only =
      app->add_flag("--stats-only", o->run.stats_only, "Only compute the statistics and write them to -o (HDF5)");
  add_ortho_option(*app, o->ortho)->excludes(stats_only);
  app->add_option("--resample-to", o->resample_to,
                  "With --stats-only over several scenes, or --apply: read every scene resampled to this "
                  "scene's bands (matched, Gaussian with its FWHM, or linear), to mix sensors on purpose");
  app->add_option("--apply", o->run.apply_stats, "Use the statistics in this file instead of the scene's own");
  app->add_option("--tile-rows", o->run.pipeline.tile_rows, "Rows per tile (default: from a 256 MiB budget)")
      ->check(accepts::positive_integer());
  app->add_option("--backend", o->backend, "Where tiles are processed")->check(accepts::one_of({"auto", "cpu", "cuda"}));
  add_mask_options(*app, o->mask);
  add_units_option(*app, o->units, "Scenes with a scaling (gain/offset, .gain file): physical values or the stored numbers");
  return {app, [o]() { return execute(*o); }, Ranks::every};
}

}  // namespace

Registered register_mnf(CLI::App& root) { return register_reduce(root, mnf::Method::mnf); }
Registered register_pca(CLI::App& root) { return register_reduce(root, mnf::Method::pca); }

}  // namespace hb::cli
