// hyperbatch synth: the project's own AVIRIS-like scenes, with truth and library.
#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include "src/cli/commands.hpp"
#include "src/cli/validators.hpp"
#include "src/cli/progress.hpp"
#include "src/synth/synth.hpp"

namespace hb::cli {

Registered register_synth(CLI::App& root) {
  struct Options {
    std::string output;
    synth::SynthOptions synth;
    std::string interleave = "bip";
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  auto* app = root.add_subcommand("synth", "Generate a synthetic AVIRIS-like scene, its class truth and material library");
  app->add_option("-o,--output", options->output, "Scene header to write (NAME.hdr)")->required();
  app->add_option("--lines", options->synth.lines, "Lines (rows)")->check(accepts::positive_integer(1ll << 31));
  app->add_option("--samples", options->synth.samples, "Samples (columns)")->check(accepts::positive_integer(1ll << 20));
  app->add_option("--bands", options->synth.bands, "Bands (AVIRIS-Classic has 224)")->check(accepts::positive_integer(4096));
  app->add_option("--classes", options->synth.classes, "Material classes")->check(accepts::positive_integer(255));
  app->add_option("--seed", options->synth.seed, "Random seed: the same seed gives the same bytes")
      ->check(accepts::unsigned_integer());
  app->add_option("--interleave", options->interleave, "Scene interleave")->check(accepts::one_of({"bip", "bil", "bsq"}));
  app->add_option("--fill-border", options->synth.fill_border, "Fraction of the area that is no-data border")
      ->check(accepts::number_in(0.0, 0.95));
  app->add_option("--tile-rows", options->synth.tile_rows, "Rows generated per step (0 = from a memory budget)")
      ->check(accepts::non_negative_integer());
  app->add_flag("--json", options->json, "Print the written paths as JSON");
  return {app, [options]() -> Status {
            options->synth.interleave = *interleave_from_name(options->interleave);
            ProgressReporter progress("synth", "rows", true);
            auto written = synth::write_synthetic_scene(
                options->output, options->synth,
                [&](std::int64_t done, std::int64_t total) { progress.update(done, total); });
            if (!written) return written.error();
            progress.finish();
            if (options->json)
              fmt::print("{{\"scene\": \"{}\", \"truth\": \"{}\", \"library\": \"{}\"}}\n", written->scene,
                         written->truth, written->library);
            else
              fmt::print("scene   {}\ntruth   {}\nlibrary {}\n", written->scene, written->truth, written->library);
            return {};
          }};
}

}  // namespace hb::cli
