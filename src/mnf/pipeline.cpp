#include "src/mnf/pipeline.hpp"

#include <fmt/core.h>

#include <spdlog/spdlog.h>

#include "io/tile_reader.hpp"
#include "io/units.hpp"
#include "io/write_behind.hpp"
#include "mpi/agree.hpp"
#include "src/base/stopwatch.hpp"
#include "src/base/tile_budget.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

namespace hb::mnf {
namespace {

void log_rate(const char* stage, double seconds, std::int64_t bytes) {
  spdlog::info("{}: {:.3f} s, {:.1f} MB/s", stage, seconds,
               static_cast<double>(bytes) / 1e6 / std::max(seconds, 1e-9));
}

std::int64_t tile_count(std::int64_t lines, std::int64_t rows) { return (lines + rows - 1) / rows; }

RowRange tile_rows_of(std::int64_t index, std::int64_t rows, std::int64_t lines) {
  return {index * rows, std::min(lines, (index + 1) * rows)};
}

// The mean of the first few rows holding a valid pixel; zeros when none does. It only
// needs to be near the mean, and must be the same on every rank and for every tile
// size (the moments' bits depend on it).
Result<std::vector<double>> provisional_mean(const io::Cube& cube, TileOps& ops, const PixelRules& rules) {
  constexpr std::int64_t rows = 8;
  const auto lines = cube.info().shape.lines;
  for (std::int64_t t = 0; t < tile_count(lines, rows); ++t) {
    auto tile = cube.read_tile(tile_rows_of(t, rows, lines));
    if (!tile) return tile.error();
    Moments probe = Moments::zero(std::vector<double>(rules.bands.size(), 0.0));
    HB_TRY(ops.accumulate_moments(*tile, rules, probe));
    HB_TRY(ops.finish_moments());
    if (probe.count == 0) continue;
    for (auto& s : probe.sum) s /= static_cast<double>(probe.count);
    return probe.sum;
  }
  return std::vector<double>(rules.bands.size(), 0.0);
}

// Rows `core` of `tile` with up to `halo` rows each side, as a tile of their own.
io::Tile sub_tile(const io::Tile& tile, RowRange core, std::int64_t halo) {
  const RowRange held{std::max(tile.held().begin, core.begin - halo), std::min(tile.held().end, core.end + halo)};
  io::Tile part(tile.type(), tile.samples(), tile.bands(), held, core);
  const auto row_bytes = tile.bytes().size() / static_cast<std::size_t>(tile.held().rows());
  const auto from = static_cast<std::size_t>(held.begin - tile.held().begin) * row_bytes;
  std::copy_n(tile.bytes().begin() + static_cast<std::ptrdiff_t>(from), part.bytes().size(), part.bytes().begin());
  return part;
}

// Where a pass reads the scene from: operations that make samples physical themselves
// take a physical view's stored numbers (int16 crosses to a GPU as 2 bytes, not 4).
io::DeviceSource tile_source(const io::Cube& cube, const TileOps& ops) {
  return ops.takes_stored_units() ? io::device_source(cube) : io::DeviceSource{cube, nullptr};
}

// What the statistics pass adds tile by tile.
struct StatsSink {
  TileOps& ops;
  const PixelRules& rules;
  const NoiseConfig& noise_config;
  bool with_noise;
  std::int64_t granule_rows;
  std::int64_t halo;
  TreeSum& data;
  TreeSum& noise;
  const std::vector<double>& shift;
  const std::vector<double>& zero_noise;
  std::vector<std::pair<std::int64_t, std::int64_t>>& granule_valid;  // (first row, valid pixels)

  // Moments of each granule of the tile's core rows, pushed in order. A granule that
  // is the whole tile is used in place; on the GPU, which holds the whole tile on the
  // device, a granule is a narrower core of it (the same pixels and neighbours as a
  // copy, so the same bits, with no host copy); the CPU's one-row granules are copied
  // so that no call walks the whole tile.
  Status add(const io::Tile& tile) {
    const bool views = ops.device().kind() == BackendKind::cuda;
    for (std::int64_t r = tile.core().begin; r < tile.core().end; r += granule_rows) {
      const RowRange core{r, std::min(tile.core().end, r + granule_rows)};
      if (core == tile.core() || views) {
        HB_TRY(add_granule(tile.with_core(core), r));
        continue;
      }
      HB_TRY(add_granule(sub_tile(tile, core, halo), r));
    }
    return {};
  }

  // The operations may accumulate asynchronously (CUDA): moments are read after
  // finish_moments, which waits for the device. Reading them every 8 granules rather
  // than after each lets the next tile's copy overlap this one's kernels; a wait per
  // 128-row tile left the GPU idle during every copy. The moments pushed, and their
  // order, are the same.
  Status add_granule(const io::Tile& part, std::int64_t first_row) {
    Pending& p = pending.emplace_back(Pending{first_row, Moments::zero(shift), Moments::zero(zero_noise)});
    HB_TRY(ops.accumulate_moments(part, rules, p.data));
    if (with_noise) HB_TRY(ops.accumulate_noise_moments(part, rules, noise_config, p.noise));
    const bool asynchronous = ops.device().kind() == BackendKind::cuda;
    return !asynchronous || pending.size() >= kGranulesInFlight ? flush() : Status{};
  }

  // Reads the pending granules' moments and pushes them in order. Call after the last tile.
  Status flush() {
    HB_TRY(ops.finish_moments());
    for (Pending& p : pending) {
      granule_valid.emplace_back(p.first_row, p.data.count);
      HB_TRY(data.push(p.first_row / granule_rows, std::move(p.data)));
      if (with_noise) HB_TRY(noise.push(p.first_row / granule_rows, std::move(p.noise)));
    }
    pending.clear();
    return {};
  }

  static constexpr std::size_t kGranulesInFlight = 8;
  struct Pending {
    std::int64_t first_row;
    Moments data, noise;
  };
  std::deque<Pending> pending{};  // a deque: the operations hold the Moments' addresses
};

// The rows of `block` cut into tiles of at most `rows`.
std::vector<RowRange> split_rows(RowRange block, std::int64_t rows) {
  std::vector<RowRange> tiles;
  for (std::int64_t r = block.begin; r < block.end; r += rows) tiles.push_back({r, std::min(block.end, r + rows)});
  return tiles;
}

// The bytes of `tiles` as stored, with `halo` rows each side where the scene has them.
std::int64_t held_bytes(const io::CubeInfo& stored, const std::vector<RowRange>& tiles, std::int64_t halo) {
  std::int64_t rows = 0;
  for (const RowRange& t : tiles)
    rows += std::min(stored.shape.lines, t.end + halo) - std::max<std::int64_t>(0, t.begin - halo);
  return rows * stored.shape.samples * stored.bytes_per_pixel();
}

// Whether every rank's device keeps its tiles: all or none, so that the transform
// pass reads on every rank or on none (collective reads need them all).
bool keep_on_every_rank(TileOps& ops, std::int64_t bytes, const mpi::Comm& comm) {
  const bool granted = ops.keep_tiles(bytes);
  if (!comm.any(!granted)) return true;
  ops.drop_kept();
  return false;
}

}  // namespace

std::int64_t granule_rows(const Backend& backend) {
  // 128 rows (~87 k pixels of a 677-sample line) keep each GPU call busy, and the
  // default tile (~126 rows from the 256 MiB budget) rounds up to one granule: one sync
  // per tile. Granules never span tiles: statistics tiles are whole granules.
  return backend.kind() == BackendKind::cuda ? 128 : 1;
}

std::int64_t tile_rows_for(const io::CubeInfo& info, const PipelineOptions& options, std::int64_t outputs_per_pixel) {
  if (options.tile_rows > 0) return std::min(options.tile_rows, std::max<std::int64_t>(1, info.shape.lines));
  // raw + float64 widened + float32 pass-through (denoise); float64 product + float32 outputs.
  const std::int64_t per_pixel = info.bytes_per_pixel() + info.shape.bands * (8 + 4) + outputs_per_pixel * (8 + 4);
  return hb::tile_rows_for(per_pixel * info.shape.samples, options.tile_budget_bytes, info.shape.lines);
}

PipelineOptions with_device_budget(PipelineOptions options, const Backend& backend) {
  options.tile_budget_bytes = backend.tile_budget_bytes(options.tile_budget_bytes);
  return options;
}

Result<SceneStatistics> gather_statistics(const io::Cube& cube, TileOps& ops, const mpi::Comm& comm,
                                          const PipelineOptions& options) {
  const Stopwatch clock;
  const auto& info = cube.info();
  SceneStatistics stats;
  stats.rules = pixel_rules(info);
  stats.excluded_bands = excluded_bands(info);
  stats.estimator = options.estimator;
  stats.pixels = info.shape.pixels();
  if (stats.rules.bands.empty()) return bad_input(cube.path(), "bbl", "every band is marked bad");

  const std::int64_t wanted = tile_rows_for(info, options, 0);
  const std::int64_t granule = granule_rows(ops.device());
  const std::int64_t rows = (wanted + granule - 1) / granule * granule;
  const mpi::TileGrid grid{info.shape.lines, mpi::balance_rows(info.shape.lines, rows, comm.size(), granule)};
  auto shift = provisional_mean(cube, ops, stats.rules);
  if (!shift) return shift.error();
  auto estimate = probe_valid_pixels(cube, stats.rules, grid, comm);
  if (!estimate) return estimate.error();
  const Decomposition blocks = balance(grid, std::move(*estimate), info.shape.samples, comm.size());
  spdlog::debug("statistics pass: provisional mean and row balance {:.3f} s", clock.seconds());
  const bool with_noise = options.method == Method::mnf;
  const auto halo = with_noise ? noise_halo(options.estimator) : Halo{};
  const NoiseConfig noise_config{options.estimator, options.noise_window, info.shape.lines};
  const auto zero_noise = std::vector<double>(stats.rules.bands.size(), 0.0);
  const std::int64_t halo_rows = std::max(halo.above, halo.below);

  // Granule moments summed over a tree fixed by scene rows (TreeSum): the same bits for
  // any rank count and tile size (one row per granule on the CPU, 128 on the GPU).
  TreeSum data_sum(*shift), noise_sum(zero_noise);
  std::vector<std::pair<std::int64_t, std::int64_t>> granule_valid;
  StatsSink sink{ops,  stats.rules, noise_config, with_noise, granule, halo_rows,
                 data_sum, noise_sum,   *shift,       zero_noise, granule_valid};
  const auto tiles = split_rows(blocks.block(comm.rank()).rows, rows);
  const auto source = tile_source(cube, ops);
  const bool keep =
      options.keep_tiles && keep_on_every_rank(ops, held_bytes(source.cube.info(), tiles, halo_rows), comm);
  io::TileReader reader(source.cube, tiles, halo_rows, ops.device().host_allocator(), source.units);
  double input_wait = 0, compute = 0;
  const auto mine = static_cast<std::int64_t>(tiles.size());
  const auto counts = comm.allgather(mine);
  // Collective reads keep the ranks in step, agreeing on failure before each one; a
  // rank that reads on its own runs free and the ranks agree once, after the pass.
  const bool in_step = collective_reads(cube, comm);
  const std::int64_t calls = in_step ? *std::max_element(counts.begin(), counts.end()) : mine;
  Status local;
  for (std::int64_t i = 0; i < calls && local.ok(); ++i) {
    const Stopwatch wait;
    if (i < mine) {
      auto tile = reader.next();
      input_wait += wait.seconds();
      const Stopwatch work;
      local = tile ? sink.add(**tile) : Status{tile.error()};
      if (local.ok() && i + 1 == mine) local = sink.flush();
      compute += work.seconds();
    } else {
      local = read_nothing(cube, comm);
    }
    if (in_step) HB_TRY(mpi::agree(local, comm));
  }
  HB_TRY(mpi::agree(local, comm));
  spdlog::info("statistics pass on {}: rank {} has rows [{}, {}) ({} tiles of {} rows), {:.3f} s waiting for input, "
               "{:.3f} s computing{}",
               ops.device().name(), comm.rank(), blocks.block(comm.rank()).rows.begin, blocks.block(comm.rank()).rows.end,
               mine, rows, input_wait, compute, keep ? ", tiles kept on the device" : "");
  const Stopwatch reduce;
  auto data = data_sum.total(comm);
  if (!data) return data.error();
  stats.data = std::move(*data);
  if (with_noise) {
    auto noise = noise_sum.total(comm);
    if (!noise) return noise.error();
    stats.noise = std::move(*noise);
  }
  if (keep) {  // the transform takes the kept tiles: the same blocks and rows
    stats.blocks = blocks;
    stats.kept_tile_rows = rows;
  } else {  // exact valid counts per tile balance the transform passes
    std::vector<std::int64_t> exact(static_cast<std::size_t>(grid.count()), 0);
    for (const auto& [row, valid] : granule_valid) exact[static_cast<std::size_t>(row / grid.rows_per_tile)] += valid;
    comm.allreduce_sum(exact);
    stats.blocks = balance(grid, std::move(exact), info.shape.samples, comm.size());
  }
  spdlog::info("statistics reduction across {} ranks: {:.3f} s", comm.size(), reduce.seconds());
  log_rate("statistics pass", clock.seconds(), info.total_bytes());
  spdlog::info("statistics: {} valid pixels, {} excluded, {} bands used, {} noise residuals", stats.data.count,
               stats.excluded_pixels(), stats.rules.bands.size(), stats.noise.count);
  return stats;
}

Result<Covariances> covariances(const SceneStatistics& stats, Method method) {
  Covariances out;
  auto data = covariance(stats.data);
  if (!data) return data.error();
  out.data = std::move(*data);
  if (method == Method::mnf) {
    if (stats.noise.count < 2 && stats.data.count >= 2)
      return Error{ErrorKind::bad_input, {}, "noise",
                   fmt::format("no noise residuals ({} of them from {} valid pixels): the '{}' noise estimate "
                               "compares each pixel with its neighbours, which a scene of one line, or whose "
                               "valid pixels have no valid neighbours, lacks; use pca or a taller scene",
                               stats.noise.count, stats.data.count, noise_estimator_name(stats.estimator))};
    auto noise = covariance(stats.noise, noise_covariance_scale(stats.estimator));
    if (!noise) return noise.error();
    out.noise = std::move(*noise);
  }
  return out;
}

Result<Basis> build_basis(const Covariances& cov, const PixelRules& rules, Method method, const BasisOptions& options,
                          const mpi::Comm& comm) {
  const Stopwatch clock;
  auto basis = basis_from_root(
      [&] {
        return method == Method::mnf ? mnf_basis(cov.data, cov.noise.covariance, rules.bands, options)
                                     : pca_basis(cov.data, rules.bands, options);
      },
      comm);
  if (!basis) return basis.error();
  for (const auto& warning : basis->warnings) spdlog::warn("{}", warning);
  spdlog::info("eigendecomposition: {:.3f} s, {} components", clock.seconds(), basis->components());
  return basis;
}

namespace {

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
  // Writing overlaps the next tile's work when no other thread uses HDF5 (ENVI input
  // is read on the reader's own thread) and no rank must write in step with others
  // (ENVI outputs are written with pwrite by each rank on its own).
  io::WriteBehind write_behind(writer, cube.format() == io::CubeFormat::envi && !writer.writes_in_step());
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
    if (in_step) HB_TRY(local);  // a collective writer has agreed on its outcome already
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
