#include "src/mnf/pipeline.hpp"

#include <fmt/core.h>

#include <spdlog/spdlog.h>

#include "io/tile_reader.hpp"
#include "mpi/agree.hpp"
#include "src/base/stopwatch.hpp"
#include "src/base/tile_budget.hpp"
#include "src/mnf/pipeline_detail.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

namespace hb::mnf {
namespace {

using detail::log_rate;
using detail::split_rows;
using detail::tile_source;

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
  // finish_moments, which waits for the device. Reading them every 32 granules rather
  // than after each lets the next tiles' copies overlap this one's kernels; a wait per
  // 128-row tile left the GPU idle during every copy, and each wait drains the GPU's
  // queue. The moments pushed, and their order, are the same.
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

  static constexpr std::size_t kGranulesInFlight = 32;
  struct Pending {
    std::int64_t first_row;
    Moments data, noise;
  };
  std::deque<Pending> pending{};  // a deque: the operations hold the Moments' addresses
};

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
  spdlog::debug("statistics pass: provisional mean (this rank's first tile) {:.3f} s", clock.seconds());
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
  io::TileReader reader(source.cube, tiles, halo_rows, ops.device().host_allocator(), source.units,
                        ops.device().gpu());
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

}  // namespace hb::mnf
