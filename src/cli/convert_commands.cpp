// hyperbatch ingest / export: ENVI <-> HDF5 cube, lossless both ways. Streams rows in
// bounded memory; the output appears only when complete.
#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "io/cube.hpp"
#include "io/file_identity.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/validators.hpp"
#include "src/cli/convert.hpp"
#include "src/cli/progress.hpp"

namespace hb::cli {
namespace {

constexpr std::int64_t kCopyBudgetBytes = 64ll << 20;  // per step; bounds memory for any scene

Status copy_scene(const io::Cube& in, io::CubeWriter& out, bool show_progress) {
  const auto& info = in.info();
  const std::int64_t rows_per_step =
      std::max<std::int64_t>(1, kCopyBudgetBytes / std::max<std::int64_t>(1, info.bytes_per_row()));
  std::vector<std::byte> buffer(static_cast<std::size_t>(std::min(rows_per_step, info.shape.lines) *
                                                         info.bytes_per_row()));
  ProgressReporter progress("copy " + in.path(), "rows", show_progress);
  for (std::int64_t r0 = 0; r0 < info.shape.lines; r0 += rows_per_step) {
    const io::RowRange rows{r0, std::min(info.shape.lines, r0 + rows_per_step)};
    const std::span<std::byte> chunk(buffer.data(), static_cast<std::size_t>(rows.rows() * info.bytes_per_row()));
    HB_TRY(in.read_rows(rows, chunk));
    HB_TRY(out.write_rows(rows, chunk));
    progress.update(rows.end, info.shape.lines);
  }
  HB_TRY(out.commit());
  progress.finish();
  return {};
}

}  // namespace

Status convert(const ConvertOptions& options, io::CubeFormat expected_output) {
  if (io::format_from_path(options.output) != expected_output)
    return Error{ErrorKind::usage, options.output, "-o",
                 expected_output == io::CubeFormat::hdf5 ? "ingest writes HDF5: name the output NAME.h5"
                                                         : "export writes ENVI: name the output NAME.hdr"};
  io::FilePlan plan;
  plan.read_cube("scene", options.input);
  plan.write_cube("-o", options.output);
  HB_TRY(plan.check());
  auto cube = io::open_cube(options.input);
  if (!cube) return cube.error();
  io::CubeInfo info = (*cube)->info();
  if (info.meta.source_file.empty()) info.meta.source_file = (*cube)->path();

  io::WriteOptions write;
  write.interleave = info.meta.envi_interleave.value_or(io::Interleave::bip);
  write.byte_order = info.meta.envi_byte_order.value_or(io::native_byte_order());
  if (!options.interleave.empty()) write.interleave = *io::interleave_from_name(options.interleave);

  auto writer = io::create_cube(options.output, info, write);
  if (!writer) return writer.error();
  HB_TRY(copy_scene(**cube, **writer, options.show_progress));
  spdlog::info("wrote {}", options.output);
  return {};
}

namespace {

Registered register_convert(CLI::App& root, const char* name, const char* help, io::CubeFormat output_format) {
  auto options = std::make_shared<ConvertOptions>();
  auto* app = root.add_subcommand(name, help);
  app->add_option("scene", options->input, "Input scene")->required();
  app->add_option("-o,--output", options->output, "Output file")->required();
  if (output_format == io::CubeFormat::envi)
    app->add_option("--interleave", options->interleave, "Output interleave (default: the original)")
        ->check(accepts::one_of({"bip", "bil", "bsq"}));
  return {app, [options, output_format]() { return convert(*options, output_format); }};
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
