// write_synthetic_scene: validate, build the scene model, stream it through the
// project's writers (temporary names, renamed on commit) and write truth and library.
#include "src/synth/synth.hpp"

#include <algorithm>
#include <fmt/core.h>

#include "io/cube.hpp"
#include "src/synth/model.hpp"
#include "src/synth/outputs.hpp"

namespace hb::synth {
namespace {

Status validate(const std::string& out, const SynthOptions& o) {
  auto wrong = [&](const char* field, std::string message) {
    return Error{ErrorKind::usage, out, field, std::move(message)};
  };
  if (o.lines < 1) return wrong("lines", fmt::format("must be at least 1, not {}", o.lines));
  if (o.samples < 1) return wrong("samples", fmt::format("must be at least 1, not {}", o.samples));
  if (o.bands < 1 || o.bands > 4096) return wrong("bands", fmt::format("must be in [1, 4096], not {}", o.bands));
  if (o.classes < 1 || o.classes > 255)
    return wrong("classes", fmt::format("must be in [1, 255] (uint8 truth), not {}", o.classes));
  if (!(o.fill_border >= 0.0 && o.fill_border < 1.0))
    return wrong("fill_border", fmt::format("must be in [0, 1), not {}", o.fill_border));
  if (o.tile_rows < 0) return wrong("tile_rows", fmt::format("must be 0 (automatic) or positive, not {}", o.tile_rows));
  if (o.threads < 0) return wrong("threads", fmt::format("must be 0 (automatic) or positive, not {}", o.threads));
  return {};
}

io::WriteOptions interleaved(Interleave interleave) {
  io::WriteOptions options;
  options.interleave = interleave;
  return options;
}

Status write_library(const SceneModel& model, const OutputPaths& paths, std::unique_ptr<io::CubeWriter>& writer) {
  auto created = io::create_cube(paths.library_data, library_info(model), interleaved(Interleave::bsq));
  if (!created) return created.error();
  writer = std::move(*created);
  const std::vector<float> spectra = material_library(model);
  return writer->write_rows({0, model.classes()}, std::as_bytes(std::span(spectra)));
}

}  // namespace

Result<SynthOutputs> write_synthetic_scene(const std::string& out_header, const SynthOptions& options,
                                           const Progress& progress) {
  HB_TRY(validate(out_header, options));
  const OutputPaths paths = output_paths(out_header);
  const SceneModel model(options);

  auto scene = io::create_cube(paths.scene_target, scene_info(model), interleaved(options.interleave));
  if (!scene) return scene.error();
  auto truth = io::create_cube(paths.truth, truth_info(model), interleaved(Interleave::bsq));
  if (!truth) return truth.error();
  std::unique_ptr<io::CubeWriter> library;
  HB_TRY(write_library(model, paths, library));
  HB_TRY(stream_scene(model, **scene, **truth, progress));

  // Everything is written; only now do the files take their final names.
  HB_TRY(library->commit());
  HB_TRY((*truth)->commit());
  HB_TRY((*scene)->commit());
  return SynthOutputs{paths.scene, paths.truth, paths.library};
}

}  // namespace hb::synth
