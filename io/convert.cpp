// ENVI <-> HDF5, lossless both ways: rows streamed in bounded memory; the output
// appears only when complete.
#include "io/convert.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "io/file_identity.hpp"
#include "io/write_behind.hpp"
#include "src/base/stopwatch.hpp"

namespace hb::io {
namespace {

constexpr std::int64_t kCopyBudgetBytes = 64ll << 20;  // per step; bounds memory for any scene

// Each step read while the one before it is written, where no two threads would then
// use HDF5 (io/write_behind.hpp): the input's reading, decoding or conversion hides
// behind the output's writing.
Status copy_scene(const Cube& in, CubeWriter& out, const ConvertOptions::Progress& progress) {
  const auto& info = in.info();
  const std::int64_t rows_per_step =
      std::max<std::int64_t>(1, kCopyBudgetBytes / std::max<std::int64_t>(1, info.bytes_per_row()));
  WriteBehind behind(out, may_write_behind(in, out));
  Stopwatch clock;
  double reading = 0, writing = 0;
  for (std::int64_t r0 = 0; r0 < info.shape.lines; r0 += rows_per_step) {
    const RowRange rows{r0, std::min(info.shape.lines, r0 + rows_per_step)};
    const auto step = behind.next_bytes(static_cast<std::size_t>(rows.rows() * info.bytes_per_row()));
    clock.lap();
    HB_TRY(in.read_rows(rows, step));
    reading += clock.lap();
    HB_TRY(behind.write(rows, writing));
    if (progress) progress(rows.end, info.shape.lines);
  }
  HB_TRY(behind.finish(writing));
  clock.lap();
  HB_TRY(out.commit());
  spdlog::debug("copied in steps of {} rows: reading {:.3f} s, waiting for writes {:.3f} s, committing {:.3f} s",
                rows_per_step, reading, writing, clock.lap());
  return {};
}

}  // namespace

Status convert(const ConvertOptions& options, CubeFormat expected_output) {
  if (format_from_path(options.output) != expected_output)
    return Error{ErrorKind::usage, options.output, "-o",
                 expected_output == CubeFormat::hdf5 ? "ingest writes HDF5: name the output NAME.h5"
                                                     : "export writes ENVI: name the output NAME.hdr"};
  FilePlan plan;
  plan.read_cube("scene", options.input);
  plan.write_cube("-o", options.output);
  HB_TRY(plan.check());
  auto stored = open_stored_cube(options.input);
  if (!stored) return stored.error();
  auto cube = with_units(std::move(*stored), options.units);
  CubeInfo info = cube->info();
  if (info.meta.source_file.empty()) info.meta.source_file = cube->path();

  WriteOptions write;
  write.interleave = info.meta.envi_interleave.value_or(Interleave::bip);
  write.byte_order = info.meta.envi_byte_order.value_or(native_byte_order());
  if (!options.interleave.empty()) write.interleave = *interleave_from_name(options.interleave);

  auto writer = create_cube(options.output, info, write);
  if (!writer) return writer.error();
  HB_TRY(copy_scene(*cube, **writer, options.progress));
  spdlog::info("wrote {}", options.output);
  return {};
}

}  // namespace hb::io
