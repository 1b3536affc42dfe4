// hyperbatch ingest / export: ENVI <-> HDF5 cube, lossless both ways (io/convert.hpp),
// with a progress bar.
#include "io/convert.hpp"
#include "io/units.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/progress.hpp"
#include "src/cli/validators.hpp"

namespace hb::cli {
namespace {

Status convert_with_progress(io::ConvertOptions options, io::CubeFormat output_format) {
  ProgressReporter progress("copy " + options.input, "rows", true);
  options.progress = [&](std::int64_t done, std::int64_t total) { progress.update(done, total); };
  HB_TRY(io::convert(options, output_format));
  progress.finish();
  return {};
}

Registered register_convert(CLI::App& root, const char* name, const char* help, io::CubeFormat output_format) {
  auto options = std::make_shared<io::ConvertOptions>();
  auto units = std::make_shared<std::string>("raw");
  auto* app = root.add_subcommand(name, help);
  app->add_option("scene", options->input, "Input scene")->required();
  app->add_option("-o,--output", options->output, "Output file")->required();
  if (output_format == io::CubeFormat::envi)
    app->add_option("--interleave", options->interleave, "Output interleave (default: the original)")
        ->check(accepts::one_of({"bip", "bil", "bsq"}));
  add_units_option(*app, *units,
                   "raw (default): the stored numbers, the scaling kept as metadata; physical: float32 physical values");
  return {app, [options, units, output_format]() {
            options->units = io::units_from_name(*units).value_or(io::Units::raw);
            return convert_with_progress(*options, output_format);
          }};
}

}  // namespace

Registered register_ingest(CLI::App& root) {
  return register_convert(root, "ingest", "Convert an ENVI scene to an HDF5 cube (lossless)", io::CubeFormat::hdf5);
}

Registered register_export(CLI::App& root) {
  return register_convert(root, "export", "Convert an HDF5 cube to ENVI NAME.hdr + NAME.img (lossless)",
                          io::CubeFormat::envi);
}

}  // namespace hb::cli
