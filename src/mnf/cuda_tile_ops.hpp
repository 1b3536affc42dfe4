// The CUDA half of the MNF/PCA tile operations (see TileOps), on one GPU: the raw tile is
// copied as stored (int16 stays 2 bytes) through a pinned buffer and widened on the
// device, into physical units there when the tile carries them (io::StoredUnits); statistics in FP64 (the hand SYRK kernel), transforms as FP64 DGEMM rounded once to
// float32 (the accuracy the SPy comparison needs; see docs/PERFORMANCE.md for the
// FP32 variants measured against it).
//
// Two streams: tiles are copied on `copy_stream_` into one of two device buffers while
// `stream_` still computes on the other; the statistics calls return once their tile's
// bytes are on the device (the host buffer is then free for the reader) and add the
// tile's moments into device-side totals, which finish_moments() brings back. The
// totals are folded tile by tile in the same order as a host fold would, so results
// are bitwise those of the synchronous engine.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "src/base/error.hpp"
#include "io/tile.hpp"
#include "src/base/cuda_buffers.hpp"
#include "src/base/gpu_step_clock.hpp"
#include "src/mnf/cuda_eigen.hpp"
#include "src/mnf/tile_ops.hpp"

namespace hb::cuda {

// The statistics pass's steps timed on the GPU when the log is at debug level.
enum StatsStep { kTileCopy, kMask, kConvert, kNoise, kCross, kStatsSteps };

// Where the host waited for the device, logged when the operations end.
struct HostWaits {
  double staged_bytes = 0;     // pageable tiles copied into the pinned buffer
  double staging_seconds = 0;  // that copying
  double copy_seconds = 0;     // each tile's upload (the kernels run on behind it)
  double moments_seconds = 0;  // the kernels, and the moments brought home
};
// In a .cpp: spdlog's compile-time format checks do not build under nvcc.
void log_host_waits(const HostWaits& waits, const std::array<double, kStatsSteps>& gpu_steps);
bool debug_logging();

// `device` must be a CUDA backend (its gpu() is the GPU the operations run on).
std::unique_ptr<mnf::TileOps> make_mnf_tile_ops(std::unique_ptr<Backend> device);

class MnfTileOps final : public mnf::TileOps {
 public:
  explicit MnfTileOps(std::unique_ptr<Backend> device);
  ~MnfTileOps() override;

  Result<linalg::SymmetricEigen> symmetric_eigen(const linalg::Matrix& a) override;
  // Stored int16 crosses the link as 2 bytes and is made physical on the device.
  bool takes_stored_units() const override { return true; }
  Status convert_to_f32(const io::Tile& tile, std::span<float> out) override;
  Status accumulate_moments(const io::Tile& tile, const mnf::PixelRules& rules, mnf::Moments& data) override;
  Status accumulate_noise_moments(const io::Tile& tile, const mnf::PixelRules& rules,
                                  const mnf::NoiseConfig& config, mnf::Moments& noise) override;
  Status transform(const io::Tile& tile, const mnf::PixelRules& rules, const mnf::LinearMap& map,
                   std::span<float> out) override;
  Status finish_moments() override;
  bool keep_tiles(std::int64_t bytes) override;
  Status transform_kept(RowRange core, const mnf::PixelRules& rules, const mnf::LinearMap& map,
                        std::span<float> out) override;
  void drop_kept() override;

  // What the kernels need of a tile on the device: `physical` when its stored numbers
  // were made float32 physical samples there.
  struct TileShape {
    DataType type = DataType::f32;
    bool physical = false;
    std::int64_t samples = 0, bands = 0;
    RowRange held, core;
    std::int64_t pixels() const { return held.rows() * samples; }
  };
  static TileShape shape_of(const io::Tile& tile) {
    return {tile.type(), tile.units() != nullptr, tile.samples(), tile.bands(), tile.held(), tile.core()};
  }

 private:
  struct TileKey {
    const void* data = nullptr;
    std::size_t bytes = 0;
    RowRange held;
    bool operator==(const TileKey&) const = default;
  };

  Status upload_tile(const io::Tile& tile);
  Status make_physical(DataType type, std::int64_t pixels, std::int64_t bands, const io::StoredUnits& units,
                       const void* stored, int slot);
  Status upload_rules(const TileShape& tile, const mnf::PixelRules& rules);
  Status ensure_mask(const TileShape& tile, const mnf::PixelRules& rules);
  Status transform_current(const TileShape& tile, const mnf::PixelRules& rules, const mnf::LinearMap& map,
                           std::span<float> out);
  Status keep_copy(const io::Tile& tile, const void* on_device);  // cuda_kept_tiles.cu
  Status reserve_matrices(std::int64_t core_pixels, std::int64_t columns);
  Status add_tile_moments(std::int64_t core_pixels, mnf::Moments& into);  // cuda_moment_totals.cu
  Status release_tile();

  // Device-side running totals for one host Moments, seeded from it on first use.
  struct Totals {
    mnf::Moments* host = nullptr;
    DeviceBuffer count, sum, cross;
  };
  Result<Totals*> totals_for(mnf::Moments& host);

  int device_;
  DeviceEigenSolver eigen_;
  cudaStream_t stream_ = nullptr;       // kernels
  cudaStream_t copy_stream_ = nullptr;  // host-to-device tile copies
  cublasHandle_t cublas_ = nullptr;
  DeviceBuffer raw_[2];                 // tile samples: one computed on, one being filled
  DeviceBuffer stored_, units_;         // a tile of stored numbers as copied; its gain and offset
  std::vector<double> units_on_device_; // what units_ holds
  TileKey resident_[2];                 // which tile each holds
  cudaEvent_t copied_[2] = {};          // the copy into raw_[i] is done
  cudaEvent_t released_[2] = {};        // the kernels reading raw_[i] are done
  int current_ = 0;                     // the slot of the tile being computed on
  bool mask_ready_ = false;      // its exclusion mask is computed for the current rules
  std::vector<int> rules_bands_; // the good bands uploaded
  PinnedBuffer staging_;
  DeviceBuffer valid_, good_bands_, matrix_, workspace_, syrk_workspace_, shift_, product_, map_;
  DeviceBuffer count_, sum_, cross_;    // one tile's moments
  std::vector<std::unique_ptr<Totals>> totals_;
  std::vector<std::unique_ptr<Totals>> spare_;  // finished totals whose buffers are reused
  std::vector<double> map_on_device_;  // what map_ holds: matrix, centre, offset
  PinnedBuffer moments_home_;  // the totals copied home by finish_moments, all at once
  std::vector<double> shift_on_device_;  // what shift_ holds
  HostWaits waits_;
  GpuStepClock<kStatsSteps> steps_;  // GPU seconds of the statistics pass's steps (debug log)

  // Tiles kept between passes (keep_tiles), as stored, one after another in kept_.
  struct KeptTile {
    TileShape shape;
    std::optional<io::StoredUnits> units;
    std::size_t offset = 0, bytes = 0;
  };
  bool keeping_ = false;
  DeviceBuffer kept_;
  std::size_t kept_used_ = 0;
  std::vector<KeptTile> kept_tiles_;
};

}  // namespace hb::cuda
