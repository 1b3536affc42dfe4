// The transform passes of MNF/PCA (pipeline.hpp): components, and the denoised scene,
// streamed tile by tile to a writer by every rank.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

#include "io/tile_reader.hpp"
#include "io/write_behind.hpp"
#include "mpi/agree.hpp"
#include "src/base/stopwatch.hpp"
#include "src/mnf/pipeline.hpp"
#include "src/mnf/pipeline_detail.hpp"

namespace hb::mnf {
namespace {

using detail::log_rate;
using detail::split_rows;
using detail::tile_source;

// The blocks of a transform pass: the statistics pass's when given, else probed.
Result<Decomposition> transform_blocks(const io::Cube& cube, const PixelRules& rules, std::int64_t tile_rows,
                                       const mpi::Comm& comm, const Decomposition* given) {
  if (given != nullptr && given->grid.lines == cube.info().shape.lines &&
      static_cast<int>(given->cuts.size()) == comm.size() + 1)
    return *given;
  const auto lines = cube.info().shape.lines;
  const mpi::TileGrid grid{lines, mpi::balance_rows(lines, tile_rows, comm.size())};
  auto valid = probe_valid_pixels(cube, rules, grid, comm);
  if (!valid) return valid.error();
  return balance(grid, std::move(*valid), cube.info().shape.samples, comm.size());
}

// Runs `per_tile(tile, out)` over this rank's block, `tile_rows` rows at a time, and
// writes each result. With a collective reader or writer every rank makes the same
// number of calls (empty ones past its own rows) and agrees on failure before each
// write, so that no rank waits in a write another will not make.
// A tile is `per_tile(tile, core, out)`: `tile` null when the device kept it (`kept`:
// nothing is read then, on any rank).
template <class PerTile>
Status transform_pass(const char* stage, const io::Cube& cube, io::CubeWriter& writer, std::int64_t tile_rows,
                      std::int64_t outputs, const mpi::Comm& comm, const HostAllocator& allocator,
                      const io::DeviceSource& source, const Decomposition& blocks, bool kept, PerTile&& per_tile) {
  const Stopwatch clock;
  const auto& shape = cube.info().shape;
  const std::int64_t rows = std::clamp<std::int64_t>(tile_rows, 1, std::max<std::int64_t>(1, shape.lines));
  const auto tiles = split_rows(blocks.block(comm.rank()).rows, rows);
  auto counts = comm.allgather(static_cast<std::int64_t>(tiles.size()));
  // Collective reads or writes keep the ranks in step (every rank makes every call,
  // empty ones past its own rows, and they agree on failure before each write); ranks
  // that read and write on their own run free and agree once, after the pass.
  const bool reads_in_step = !kept && collective_reads(cube, comm);
  const bool in_step = reads_in_step || writer.writes_in_step();
  const std::int64_t calls = in_step ? *std::max_element(counts.begin(), counts.end())
                                     : static_cast<std::int64_t>(tiles.size());
  io::TileReader reader(source.cube, kept ? std::vector<RowRange>{} : tiles, 0, allocator, source.units);
  // Writing overlaps the next tile's work when no other thread then uses HDF5 and the
  // ranks need not keep in step (io/write_behind.hpp): a write's failure must be agreed
  // on before the next collective call.
  io::WriteBehind write_behind(writer, !in_step && io::may_write_behind(cube, writer));
  double input_wait = 0, compute = 0, output = 0;
  Status local;
  for (std::int64_t i = 0; i < calls && local.ok(); ++i) {
    const bool have = i < static_cast<std::int64_t>(tiles.size());
    const io::Tile* tile = nullptr;
    const Stopwatch wait;
    if (have && !kept) {
      auto next = reader.next();
      if (next) tile = *next;
      else local = next.error();
    } else if (!have && reads_in_step) {
      local = read_nothing(cube, comm);
    }
    input_wait += wait.seconds();
    const Stopwatch work;
    const RowRange core = have ? tiles[static_cast<std::size_t>(i)] : RowRange{};
    const auto values = static_cast<std::size_t>(core.rows() * shape.samples * outputs);
    if (local.ok() && have) local = per_tile(tile, core, write_behind.next_buffer(values));
    compute += work.seconds();
    if (in_step) HB_TRY(mpi::agree(local, comm));
    if (!local.ok()) break;
    if (have) {
      local = write_behind.write(core, output);
    } else {  // a collective write in step with the ranks that still have rows
      const Stopwatch write;
      local = writer.write_rows({}, {});
      output += write.seconds();
    }
    // A collective writer has agreed on its outcome already; others agree here, so that
    // no rank leaves while the rest wait in the next collective read.
    if (in_step) HB_TRY(writer.writes_in_step() ? local : mpi::agree(local, comm));
  }
  const Status written = write_behind.finish(output);
  if (local.ok()) local = written;
  HB_TRY(mpi::agree(local, comm));
  spdlog::info("{}: rank {} rows [{}, {}): {:.3f} s waiting for input, {:.3f} s computing, {:.3f} s waiting for output", stage,
               comm.rank(), blocks.block(comm.rank()).rows.begin, blocks.block(comm.rank()).rows.end, input_wait,
               compute, output);
  log_rate(stage, clock.seconds(), cube.info().total_bytes());
  return {};
}

}  // namespace

Status write_components(const io::Cube& cube, TileOps& ops, const PixelRules& rules, const LinearMap& map,
                        io::CubeWriter& writer, std::int64_t tile_rows, const mpi::Comm& comm,
                        const Decomposition* blocks, bool kept) {
  auto chosen = transform_blocks(cube, rules, tile_rows, comm, blocks);
  if (!chosen) return chosen.error();
  return transform_pass("transform pass", cube, writer, tile_rows, map.outputs(), comm, ops.device().host_allocator(),
                        tile_source(cube, ops), *chosen, kept,
                        [&](const io::Tile* tile, RowRange core, std::span<float> out) {
                          return tile ? ops.transform(*tile, rules, map, out)
                                      : ops.transform_kept(core, rules, map, out);
                        });
}

Status write_denoised(const io::Cube& cube, TileOps& ops, const PixelRules& rules, const LinearMap& map,
                      io::CubeWriter& writer, std::int64_t tile_rows, const mpi::Comm& comm,
                      const Decomposition* blocks) {
  auto chosen = transform_blocks(cube, rules, tile_rows, comm, blocks);
  if (!chosen) return chosen.error();
  const std::int64_t bands = cube.info().shape.bands;
  const std::int64_t used = rules.used_bands();
  std::vector<float> denoised;
  // The pass-through bands are written as read: the samples themselves, physical.
  return transform_pass("denoise pass", cube, writer, tile_rows, bands, comm, ops.device().host_allocator(),
                        io::DeviceSource{cube, nullptr}, *chosen, false,
                        [&](const io::Tile* read, RowRange, std::span<float> out) -> Status {
                          const io::Tile& tile = *read;  // never kept: the pass reads every tile
                          HB_TRY(ops.convert_to_f32(tile, out));  // pass-through values
                          denoised.resize(static_cast<std::size_t>(tile.pixels() * used));
                          HB_TRY(ops.transform(tile, rules, map, denoised));
                          for (std::int64_t p = 0; p < tile.pixels(); ++p) {
                            const float* d = denoised.data() + p * used;
                            if (std::isnan(d[0])) continue;  // excluded pixel: the fill value
                            for (std::int64_t k = 0; k < used; ++k)
                              out[static_cast<std::size_t>(p * bands + rules.bands[static_cast<std::size_t>(k)])] = d[k];
                          }
                          return {};
                        });
}

}  // namespace hb::mnf
