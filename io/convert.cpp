// ENVI <-> HDF5, lossless both ways: rows streamed in bounded memory; the output
// appears only when complete.
#include "io/convert.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "io/file_identity.hpp"

namespace hb::io {
namespace {

constexpr std::int64_t kCopyBudgetBytes = 64ll << 20;  // per step; bounds memory for any scene

Status copy_scene(const Cube& in, CubeWriter& out, const ConvertOptions::Progress& progress) {
  const auto& info = in.info();
  const std::int64_t rows_per_step =
      std::max<std::int64_t>(1, kCopyBudgetBytes / std::max<std::int64_t>(1, info.bytes_per_row()));
  std::vector<std::byte> buffer(static_cast<std::size_t>(std::min(rows_per_step, info.shape.lines) *
                                                         info.bytes_per_row()));
  for (std::int64_t r0 = 0; r0 < info.shape.lines; r0 += rows_per_step) {
    const RowRange rows{r0, std::min(info.shape.lines, r0 + rows_per_step)};
    const std::span<std::byte> chunk(buffer.data(), static_cast<std::size_t>(rows.rows() * info.bytes_per_row()));
    HB_TRY(in.read_rows(rows, chunk));
    HB_TRY(out.write_rows(rows, chunk));
    if (progress) progress(rows.end, info.shape.lines);
  }
  return out.commit();
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
