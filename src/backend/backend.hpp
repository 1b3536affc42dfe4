// Which device runs the work: the CPU or one GPU, chosen by name or for this rank, and
// what the work needs to know of it (its name, the memory for tiles, the tile budget).
// Each algorithm keeps its own CPU and CUDA halves behind its own seam (MNF:
// src/mnf/tile_ops.hpp) and picks the half from the Backend it is given.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "io/tile.hpp"
#include "src/base/error.hpp"
#include "src/base/row_range.hpp"

namespace hb {
namespace io {
class ImageSink;
}

enum class BackendKind { automatic, cpu, cuda };

std::optional<BackendKind> backend_kind_from_name(std::string_view name);  // auto|cpu|cuda

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  virtual std::string_view name() const = 0;  // "cpu" or "cuda"
  virtual std::string device_description() const = 0;  // for logs: CPU model / GPU name
  // The GPU ordinal of a CUDA backend, -1 for the CPU.
  virtual int gpu() const { return -1; }

  // Memory for the tiles this backend consumes: pinned on CUDA, so that tiles cross to
  // the device without a staging copy. Empty = plain heap.
  virtual HostAllocator host_allocator() const { return {}; }

  // Where a job loads a scene ahead of its steps (io/file_image.hpp): this GPU's memory
  // on CUDA, whose statistics pass is bound by its reads; none on the CPU.
  virtual std::shared_ptr<io::ImageSink> image_sink() const { return nullptr; }

  // The per-tile working-memory budget to use when `wanted` is asked for: less where
  // the device has less free (CUDA), so scenes larger than the GPU stream through.
  virtual std::int64_t tile_budget_bytes(std::int64_t wanted) const { return wanted; }
};

// This process's GPU: the one rank binding chose (set_process_gpu), else the GPU
// numbered by the launcher's node-local rank (mpi::launcher_local_rank(); 0 outside a
// launcher), modulo the visible GPUs. Every factory that is not handed a device uses
// it, so that no rank lands on GPU 0 by default.
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
// of a second), then cuBLAS (cuda::prime_gemms), so that both overlap the command's
// first host work; the thread joins
// when it goes out of scope, and is empty without CUDA. Start it after MPI's start-up,
// never during it: MPI_Init sets environment variables while cuInit reads them, and
// getenv racing setenv crashed hyperbatch (a segfault in getenv under cuInit). A job of
// one rank (`ranks`) first narrows CUDA_VISIBLE_DEVICES to the one GPU it uses.
std::jthread warm_up_device(int ranks);
int cuda_device_count();  // 0 without HB_CUDA or without a GPU

}  // namespace hb
