// The seam between CPU and CUDA: what runs on a tile. Orchestration above this
// interface is shared, so the same tests drive both backends.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>

#include "src/base/error.hpp"
#include "io/tile.hpp"
#include "src/linalg/eigen.hpp"

namespace hb {

namespace mnf {
struct PixelRules;
struct NoiseConfig;
struct Moments;
struct LinearMap;
}  // namespace mnf

enum class BackendKind { automatic, cpu, cuda };

std::optional<BackendKind> backend_kind_from_name(std::string_view name);  // auto|cpu|cuda

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  virtual std::string_view name() const = 0;  // "cpu" or "cuda"
  virtual std::string device_description() const = 0;  // for logs: CPU model / GPU name

  // Memory for the tiles this backend consumes: pinned on CUDA, so that tiles cross to
  // the device without a staging copy. Empty = plain heap.
  virtual HostAllocator host_allocator() const { return {}; }

  // The per-tile working-memory budget to use when `wanted` is asked for: less where
  // the device has less free (CUDA), so scenes larger than the GPU stream through.
  virtual std::int64_t tile_budget_bytes(std::int64_t wanted) const { return wanted; }

  // Symmetric eigendecomposition for the basis (LAPACK here, cuSOLVER on CUDA), in
  // linalg's descending, sign-normalised form so that backends agree.
  virtual Result<linalg::SymmetricEigen> symmetric_eigen(const linalg::Matrix& a) { return linalg::symmetric_eigen(a); }

  // Widens a tile's held samples to float32 (canonical layout kept).
  virtual Status convert_to_f32(const io::Tile& tile, std::span<float> out) = 0;

  // --- MNF / PCA (src/mnf). Tiles hold the scene's raw type; a backend widens on its
  // own side. The defaults run on the host (src/backend/cpu_mnf.cpp), so a backend
  // may override these one at a time; results must match them to rounding.

  // Adds the valid pixels of the tile's core rows (used bands only) to `data`,
  // centred on data.shift. data.bands() == rules.used_bands().
  virtual Status accumulate_moments(const io::Tile& tile, const mnf::PixelRules& rules, mnf::Moments& data);
  // Adds the noise residuals owned by the tile's core rows to `noise` (shift zero).
  // The tile must carry noise_halo(config.estimator) rows where the scene has them.
  virtual Status accumulate_noise_moments(const io::Tile& tile, const mnf::PixelRules& rules,
                                          const mnf::NoiseConfig& config, mnf::Moments& noise);
  // accumulate_* may run asynchronously (CUDA: the next tile's copy overlaps this one's
  // kernels, the sums stay on the device). After finish_moments() every Moments passed
  // to them holds its totals. Call it before reading or reducing them.
  virtual Status finish_moments() { return {}; }
  // Applies `map` to every core pixel: out is [core pixels x map.outputs()] float32,
  // excluded pixels get map.fill. Accumulate in FP64 (float32 GEMM misses the 1e-6-of-sd
  // accuracy on low-SNR MNF components of real 198-band scenes), round once at the end.
  virtual Status transform(const io::Tile& tile, const mnf::PixelRules& rules, const mnf::LinearMap& map,
                           std::span<float> out);
};

// This process's GPU: the one rank binding chose (set_process_gpu), else the GPU
// numbered by the launcher's node-local rank (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID,
// MPI_LOCALRANKID; 0 outside a launcher), modulo the visible GPUs. Every factory that
// is not handed a device uses it, so that no rank lands on GPU 0 by default.
inline constexpr int kProcessGpu = -1;
int process_gpu();
void set_process_gpu(int device);
// `device`, or process_gpu() when it is kProcessGpu: what a factory handed a device uses.
inline int resolve_gpu(int device) { return device == kProcessGpu ? process_gpu() : device; }

// cpu: always available. cuda: needs a build with HB_CUDA and a visible GPU.
// automatic: cuda when both hold, else cpu. `device` selects the GPU ordinal.
Result<std::unique_ptr<Backend>> make_backend(BackendKind kind, int device = kProcessGpu);

bool cuda_compiled_in();

// Starts the CUDA driver and the context of this rank's GPU on a thread (a few tenths
// of a second), so that it overlaps the command's first host work; the thread joins
// when it goes out of scope, and is empty without CUDA. Start it after MPI's start-up,
// never during it: MPI_Init sets environment variables while cuInit reads them, and
// getenv racing setenv crashed hyperbatch (a segfault in getenv under cuInit).
std::jthread warm_up_device();
int cuda_device_count();  // 0 without HB_CUDA or without a GPU

}  // namespace hb
