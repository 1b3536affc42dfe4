// The seam between CPU and CUDA for MNF/PCA: what runs on a tile. The pipeline above it
// is shared, so the same tests drive both halves (src/mnf/cpu_tile_ops.*,
// src/mnf/cuda_tile_ops.*). Tiles hold the scene's raw type; each half widens on its
// own side, and the CUDA half must match the CPU half to rounding.
#pragma once

#include <memory>
#include <span>

#include "io/tile.hpp"
#include "src/backend/backend.hpp"
#include "src/base/error.hpp"
#include "src/linalg/eigen.hpp"
#include "src/mnf/linear_map.hpp"
#include "src/mnf/stats.hpp"

namespace hb::mnf {

class TileOps {
 public:
  explicit TileOps(std::unique_ptr<Backend> device) : device_(std::move(device)) {}
  virtual ~TileOps() = default;
  TileOps(const TileOps&) = delete;
  TileOps& operator=(const TileOps&) = delete;

  // The device the operations run on: its name, tile budget and host allocator.
  const Backend& device() const { return *device_; }

  // Symmetric eigendecomposition for the basis (LAPACK on the CPU, cuSOLVER on CUDA), in
  // linalg's descending, sign-normalised form so that both halves agree.
  virtual Result<linalg::SymmetricEigen> symmetric_eigen(const linalg::Matrix& a) = 0;

  // Whether tiles may come as stored numbers standing for physical ones (io::Tile::units:
  // a physical view's narrow integers) for the operations to make physical themselves.
  virtual bool takes_stored_units() const { return false; }

  // Widens a tile's held samples to float32 (canonical layout kept).
  virtual Status convert_to_f32(const io::Tile& tile, std::span<float> out) = 0;

  // Adds the valid pixels of the tile's core rows (used bands only) to `data`,
  // centred on data.shift. data.bands() == rules.used_bands().
  virtual Status accumulate_moments(const io::Tile& tile, const PixelRules& rules, Moments& data) = 0;
  // Adds the noise residuals owned by the tile's core rows to `noise` (shift zero).
  // The tile must carry noise_halo(config.estimator) rows where the scene has them.
  virtual Status accumulate_noise_moments(const io::Tile& tile, const PixelRules& rules, const NoiseConfig& config,
                                          Moments& noise) = 0;
  // accumulate_* may run asynchronously (CUDA: the next tile's copy overlaps this one's
  // kernels, the sums stay on the device). After finish_moments() every Moments passed
  // to them holds its totals. Call it before reading or reducing them.
  virtual Status finish_moments() { return {}; }
  // Applies `map` to every core pixel: out is [core pixels x map.outputs()] float32,
  // excluded pixels get map.fill. Accumulate in FP64 (float32 GEMM misses the 1e-6-of-sd
  // accuracy on low-SNR MNF components of real 198-band scenes), round once at the end.
  virtual Status transform(const io::Tile& tile, const PixelRules& rules, const LinearMap& map,
                           std::span<float> out) = 0;

  // Keeping a scene on the device between its statistics and transform passes, which
  // saves the transform's reads. keep_tiles(bytes) asks room for tiles of `bytes` in
  // all (stored numbers, halos included); once granted, every tile the accumulate_*
  // calls see is kept, and transform_kept() transforms the core rows of a kept tile as
  // transform() would the tile. drop_kept() frees them. The CPU never keeps tiles.
  virtual bool keep_tiles(std::int64_t /*bytes*/) { return false; }
  virtual Status transform_kept(RowRange /*core*/, const PixelRules& /*rules*/, const LinearMap& /*map*/,
                                std::span<float> /*out*/) {
    return Error{ErrorKind::internal, {}, {}, "transform_kept: this device keeps no tiles"};
  }
  virtual void drop_kept() {}

 private:
  std::unique_ptr<Backend> device_;
};

// The half that runs on `device`: CUDA for a CUDA backend, else the CPU.
std::unique_ptr<TileOps> make_tile_ops(std::unique_ptr<Backend> device);
// The same, for the device make_backend(kind, gpu) chooses.
Result<std::unique_ptr<TileOps>> make_tile_ops(BackendKind kind, int gpu = kProcessGpu);

}  // namespace hb::mnf
