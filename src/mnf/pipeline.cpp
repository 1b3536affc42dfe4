#include "src/mnf/pipeline.hpp"

#include <spdlog/spdlog.h>

#include "io/tile_reader.hpp"
#include "io/write_behind.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace hb::mnf {
namespace {

class Stopwatch {
 public:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

void log_rate(const char* stage, double seconds, std::int64_t bytes) {
  spdlog::info("{}: {:.3f} s, {:.1f} MB/s", stage, seconds,
               static_cast<double>(bytes) / 1e6 / std::max(seconds, 1e-9));
}

std::int64_t tile_count(std::int64_t lines, std::int64_t rows) { return (lines + rows - 1) / rows; }

io::RowRange tile_rows_of(std::int64_t index, std::int64_t rows, std::int64_t lines) {
  return {index * rows, std::min(lines, (index + 1) * rows)};
}

// This rank's tiles: dealt round-robin.
std::vector<io::RowRange> rank_tiles(std::int64_t lines, std::int64_t rows, const mpi::Comm& comm) {
  std::vector<io::RowRange> tiles;
  for (std::int64_t t = comm.rank(); t < tile_count(lines, rows); t += comm.size())
    tiles.push_back(tile_rows_of(t, rows, lines));
  return tiles;
}

// The mean of the first few rows holding a valid pixel; zeros when none does. It only
// needs to be near the mean, and must be the same on every rank.
Result<std::vector<double>> provisional_mean(const io::Cube& cube, Backend& backend, const PixelRules& rules,
                                             std::int64_t tile_rows) {
  constexpr std::int64_t kProbeRows = 8;
  const std::int64_t rows = std::min(tile_rows, kProbeRows);
  const auto lines = cube.info().shape.lines;
  for (std::int64_t t = 0; t < tile_count(lines, rows); ++t) {
    auto tile = cube.read_tile(tile_rows_of(t, rows, lines));
    if (!tile) return tile.error();
    Moments probe = Moments::zero(std::vector<double>(rules.bands.size(), 0.0));
    HB_TRY(backend.accumulate_moments(*tile, rules, probe));
    HB_TRY(backend.finish_moments());
    if (probe.count == 0) continue;
    for (auto& s : probe.sum) s /= static_cast<double>(probe.count);
    return probe.sum;
  }
  return std::vector<double>(rules.bands.size(), 0.0);
}

// Calls f(tile) for every tile of `reader`, adding the time spent waiting for input.
template <class F>
Status for_each_tile(io::TileReader& reader, double& input_wait, F&& f) {
  while (true) {
    const Stopwatch wait;
    auto tile = reader.next();
    input_wait += wait.seconds();
    if (!tile) return tile.error();
    if (!*tile) return {};
    HB_TRY(f(**tile));
  }
}

void allreduce(const mpi::Comm& comm, Moments& m) {
  std::int64_t count[1] = {m.count};
  comm.allreduce_sum(count);
  m.count = count[0];
  comm.allreduce_sum(m.sum);
  comm.allreduce_sum(m.cross);
}

}  // namespace

std::int64_t tile_rows_for(const io::CubeInfo& info, const PipelineOptions& options, std::int64_t outputs_per_pixel) {
  if (options.tile_rows > 0) return std::min(options.tile_rows, std::max<std::int64_t>(1, info.shape.lines));
  // raw + float64 widened + float32 pass-through (denoise); float64 product + float32 outputs.
  const std::int64_t per_pixel = info.bytes_per_pixel() + info.shape.bands * (8 + 4) + outputs_per_pixel * (8 + 4);
  const std::int64_t per_row = std::max<std::int64_t>(1, per_pixel * info.shape.samples);
  return std::clamp<std::int64_t>(options.memory_budget_bytes / per_row, 1, std::max<std::int64_t>(1, info.shape.lines));
}

PipelineOptions with_device_budget(PipelineOptions options, const Backend& backend) {
  options.memory_budget_bytes = backend.tile_budget_bytes(options.memory_budget_bytes);
  return options;
}

Result<SceneStatistics> gather_statistics(const io::Cube& cube, Backend& backend, const mpi::Comm& comm,
                                          const PipelineOptions& options) {
  const Stopwatch clock;
  const auto& info = cube.info();
  SceneStatistics stats;
  stats.rules = pixel_rules(info);
  stats.excluded_bands = excluded_bands(info);
  stats.estimator = options.estimator;
  stats.pixels = info.shape.pixels();
  if (stats.rules.bands.empty()) return bad_input(cube.path(), "bbl", "every band is marked bad");

  const std::int64_t rows = tile_rows_for(info, options, 0);
  auto shift = provisional_mean(cube, backend, stats.rules, rows);
  if (!shift) return shift.error();
  stats.data = Moments::zero(*shift);
  const bool with_noise = options.method == Method::mnf;
  if (with_noise) stats.noise = Moments::zero(std::vector<double>(stats.rules.bands.size(), 0.0));
  const auto halo = with_noise ? noise_halo(options.estimator) : Halo{};
  const NoiseConfig noise_config{options.estimator, options.noise_window, info.shape.lines};

  io::TileReader reader(cube, rank_tiles(info.shape.lines, rows, comm), std::max(halo.above, halo.below),
                        backend.host_allocator());
  double input_wait = 0, compute = 0;
  const Status pass = for_each_tile(reader, input_wait, [&](const io::Tile& tile) -> Status {
    const Stopwatch work;
    HB_TRY(backend.accumulate_moments(tile, stats.rules, stats.data));
    if (with_noise) HB_TRY(backend.accumulate_noise_moments(tile, stats.rules, noise_config, stats.noise));
    compute += work.seconds();
    return {};
  });
  if (!pass) return pass.error();
  HB_TRY(backend.finish_moments());
  spdlog::info("statistics pass on {}: {} rows per tile, {:.3f} s waiting for input, {:.3f} s computing",
               backend.name(), rows, input_wait, compute);
  allreduce(comm, stats.data);
  if (with_noise) allreduce(comm, stats.noise);
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
    auto noise = covariance(stats.noise, noise_covariance_scale(stats.estimator));
    if (!noise) return noise.error();
    out.noise = std::move(*noise);
  }
  return out;
}

Result<Basis> build_basis(const Covariances& cov, const PixelRules& rules, Method method, const BasisOptions& options) {
  const Stopwatch clock;
  auto basis = method == Method::mnf ? mnf_basis(cov.data, cov.noise.covariance, rules.bands, options)
                                     : pca_basis(cov.data, rules.bands, options);
  if (!basis) return basis.error();
  for (const auto& warning : basis->warnings) spdlog::warn("{}", warning);
  spdlog::info("eigendecomposition: {:.3f} s, {} components", clock.seconds(), basis->components());
  return basis;
}

namespace {

// Runs `per_tile(tile, out)` over this rank's tiles and writes each result.
template <class PerTile>
Status transform_pass(const char* stage, const io::Cube& cube, io::CubeWriter& writer, std::int64_t tile_rows,
                      std::int64_t outputs, const mpi::Comm& comm, const io::HostAllocator& allocator,
                      PerTile&& per_tile) {
  const Stopwatch clock;
  const auto& shape = cube.info().shape;
  const std::int64_t rows = std::clamp<std::int64_t>(tile_rows, 1, std::max<std::int64_t>(1, shape.lines));
  // Tiles are dealt round-robin; a collective writer needs the distributed issue to
  // align call counts across ranks.
  io::TileReader reader(cube, rank_tiles(shape.lines, rows, comm), 0, allocator);
  // Writing overlaps the next tile's work when no other thread uses HDF5 (ENVI input
  // is read on the reader's own thread) and no rank must write in step with others.
  io::WriteBehind write_behind(writer, cube.format() == io::CubeFormat::envi && comm.size() == 1);
  double input_wait = 0, compute = 0, output_wait = 0;
  Status pass = for_each_tile(reader, input_wait, [&](const io::Tile& tile) -> Status {
    const auto out = write_behind.next_buffer(static_cast<std::size_t>(tile.pixels() * outputs));
    const Stopwatch work;
    HB_TRY(per_tile(tile, out));
    compute += work.seconds();
    return write_behind.write(tile.core(), output_wait);
  });
  const Status last = write_behind.finish(output_wait);
  if (pass && !last) pass = last;
  if (!pass) return pass.error();
  spdlog::info("{}: {:.3f} s waiting for input, {:.3f} s computing, {:.3f} s waiting for output", stage, input_wait,
               compute, output_wait);
  log_rate(stage, clock.seconds(), cube.info().total_bytes());
  return {};
}

}  // namespace

Status write_components(const io::Cube& cube, Backend& backend, const PixelRules& rules, const LinearMap& map,
                        io::CubeWriter& writer, std::int64_t tile_rows, const mpi::Comm& comm) {
  return transform_pass("transform pass", cube, writer, tile_rows, map.outputs(), comm, backend.host_allocator(),
                        [&](const io::Tile& tile, std::span<float> out) { return backend.transform(tile, rules, map, out); });
}

Status write_denoised(const io::Cube& cube, Backend& backend, const PixelRules& rules, const LinearMap& map,
                      io::CubeWriter& writer, std::int64_t tile_rows, const mpi::Comm& comm) {
  const std::int64_t bands = cube.info().shape.bands;
  const std::int64_t used = rules.used_bands();
  std::vector<float> denoised;
  return transform_pass("denoise pass", cube, writer, tile_rows, bands, comm, backend.host_allocator(),
                        [&](const io::Tile& tile, std::span<float> out) -> Status {
                          HB_TRY(backend.convert_to_f32(tile, out));  // pass-through values
                          denoised.resize(static_cast<std::size_t>(tile.pixels() * used));
                          HB_TRY(backend.transform(tile, rules, map, denoised));
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
