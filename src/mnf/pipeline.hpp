// MNF/PCA over a whole scene, tile by tile: the statistics pass (partial moments per
// tile, summed across ranks), the basis, and the transform passes that stream
// components or denoised rows to a writer. Memory is bounded by the tile size.
#pragma once

#include <cstdint>
#include <vector>

#include "io/cube.hpp"
#include "mpi/comm.hpp"
#include "src/backend/backend.hpp"
#include "src/mnf/basis.hpp"
#include "src/mnf/pipeline_ranks.hpp"
#include "src/mnf/stats.hpp"
#include "src/mnf/tile_ops.hpp"

namespace hb::mnf {

struct PipelineOptions {
  Method method = Method::mnf;
  NoiseEstimator estimator = kDefaultNoiseEstimator;
  Window noise_window;
  std::int64_t tile_rows = 0;                      // 0 = from tile_budget_bytes
  std::int64_t tile_budget_bytes = 256ll << 20;    // per tile, all working buffers
  // Ask the device to keep the statistics pass's tiles for a transform of the same
  // scene (TileOps::keep_tiles): the transform then reads no host tile.
  bool keep_tiles = false;
};

// Rows per tile so that a tile's buffers (raw, widened, outputs) fit the budget.
std::int64_t tile_rows_for(const io::CubeInfo& info, const PipelineOptions& options, std::int64_t outputs_per_pixel);
// `options` with the tile budget the backend can hold (less free GPU memory, smaller tiles).
PipelineOptions with_device_budget(PipelineOptions options, const Backend& backend);

// Scene rows per unit of the statistics reduction (see TreeSum): 1 on the CPU, 128 on a
// GPU (where a granule is a narrower core of the tile already on the device). Fixed
// per backend, so statistics have the same bits for any tile size and rank count.
std::int64_t granule_rows(const Backend& backend);

struct SceneStatistics {
  PixelRules rules;
  std::vector<std::int64_t> excluded_bands;  // scene bands left out (bad band list)
  NoiseEstimator estimator = kDefaultNoiseEstimator;
  Moments data;
  Moments noise;            // MNF only: residuals about zero
  std::int64_t pixels = 0;  // scene pixels
  Decomposition blocks;     // rows per rank, balanced by the exact valid pixels per tile
  // > 0 when every rank's device kept the pass's tiles: `blocks` are then the pass's own
  // and its tiles are cut from them by these rows, which a transform must use to find them.
  std::int64_t kept_tile_rows = 0;

  std::int64_t excluded_pixels() const { return pixels - data.count; }
};

// The statistics pass. The scene's rows are cut into a tile grid that does not depend
// on the rank count; each rank takes a contiguous run of tiles balanced by valid pixels
// (estimated by a counting pass over one row per tile). The provisional mean (the mean
// of the first rows holding a valid pixel) is computed by every rank from the same
// rows; per-tile moments are summed in global tile order (fold_in_tile_order), so the
// statistics are the same bits for any rank count.
Result<SceneStatistics> gather_statistics(const io::Cube& cube, TileOps& ops, const mpi::Comm& comm,
                                          const PipelineOptions& options);

// Mean, covariances and basis from gathered statistics.
struct Covariances {
  MeanCovariance data;
  MeanCovariance noise;  // MNF only
};
Result<Covariances> covariances(const SceneStatistics& stats, Method method);
// Computed on rank 0 and broadcast (basis_from_root): the same bits on every rank.
Result<Basis> build_basis(const Covariances& cov, const PixelRules& rules, Method method,
                          const BasisOptions& options = {}, const mpi::Comm& comm = mpi::Comm::self());

// Transform passes. Components: [lines, samples, map.outputs()] float32, excluded
// pixels NaN. Denoised: [lines, samples, scene bands] float32: used bands replaced by
// their denoised values, bad bands and excluded pixels passed through unchanged.
// Each rank transforms its block of `blocks` (the statistics pass's; probed when null)
// and every rank writes into the one output, collectively when the writer is. With
// `kept` the tiles are the ones the device kept (SceneStatistics::kept_tile_rows, which
// `tile_rows` must then be), and no tile is read.
Status write_components(const io::Cube& cube, TileOps& ops, const PixelRules& rules, const LinearMap& map,
                        io::CubeWriter& writer, std::int64_t tile_rows, const mpi::Comm& comm,
                        const Decomposition* blocks = nullptr, bool kept = false);
Status write_denoised(const io::Cube& cube, TileOps& ops, const PixelRules& rules, const LinearMap& map,
                      io::CubeWriter& writer, std::int64_t tile_rows, const mpi::Comm& comm,
                      const Decomposition* blocks = nullptr);

}  // namespace hb::mnf
