// MNF/PCA per-tile operations on one GPU, behind the Backend seam: the raw tile is
// copied as stored (int16 stays 2 bytes) through a pinned buffer and widened on the
// device; statistics in FP64 (the hand SYRK kernel), transforms as FP64 DGEMM rounded once to
// float32 (the accuracy the SPy comparison needs; see docs/PERFORMANCE.md for the
// FP32 variants measured against it).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <span>
#include <vector>

#include "io/error.hpp"
#include "io/tile.hpp"
#include "src/backend/cuda_device_buffers.hpp"

namespace hb::mnf {
struct PixelRules;
struct NoiseConfig;
struct Moments;
struct LinearMap;
}  // namespace hb::mnf

namespace hb::cuda {

// In a .cpp: spdlog's compile-time format checks do not build under nvcc.
void log_staging(double bytes, double seconds);

class MnfEngine {
 public:
  explicit MnfEngine(int device);
  ~MnfEngine();
  MnfEngine(const MnfEngine&) = delete;
  MnfEngine& operator=(const MnfEngine&) = delete;

  Status accumulate_moments(const io::Tile& tile, const mnf::PixelRules& rules, mnf::Moments& data);
  Status accumulate_noise_moments(const io::Tile& tile, const mnf::PixelRules& rules,
                                  const mnf::NoiseConfig& config, mnf::Moments& noise);
  Status transform(const io::Tile& tile, const mnf::PixelRules& rules, const mnf::LinearMap& map,
                   std::span<float> out);

 private:
  struct TileKey {
    const void* data = nullptr;
    std::size_t bytes = 0;
    io::RowRange held;
    bool operator==(const TileKey&) const = default;
  };

  Status upload_tile(const io::Tile& tile);
  Status upload_rules(const io::Tile& tile, const mnf::PixelRules& rules);
  Status ensure_mask(const io::Tile& tile, const mnf::PixelRules& rules);
  Status reserve_matrices(std::int64_t core_pixels, std::int64_t columns);
  Status add_tile_moments(std::int64_t core_pixels, mnf::Moments& into);

  int device_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  TileKey resident_;             // the tile whose raw bytes are on the device
  bool mask_ready_ = false;      // its exclusion mask is computed for the current rules
  std::vector<int> rules_bands_; // the good bands uploaded
  PinnedBuffer staging_;
  DeviceBuffer raw_, valid_, good_bands_, matrix_, workspace_, syrk_workspace_, vector_, product_, map_;
  DeviceBuffer count_, sum_, cross_;
  const void* map_key_ = nullptr;
  std::vector<double> host_cross_, host_sum_;
  double staging_seconds_ = 0;  // host copies into the pinned buffer, logged at the end
  double staged_bytes_ = 0;
};

}  // namespace hb::cuda
