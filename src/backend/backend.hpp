// The seam between CPU and CUDA: what runs on a tile. Orchestration above this
// interface is shared, so the same tests drive both backends.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "io/error.hpp"
#include "io/tile.hpp"

namespace hb {

enum class BackendKind { automatic, cpu, cuda };

std::optional<BackendKind> backend_kind_from_name(std::string_view name);  // auto|cpu|cuda

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  virtual std::string_view name() const = 0;  // "cpu" or "cuda"
  virtual std::string device_description() const = 0;  // for logs: CPU model / GPU name

  // Widens a tile's held samples to float32 (canonical layout kept).
  virtual Status convert_to_f32(const io::Tile& tile, std::span<float> out) = 0;
};

// cpu: always available. cuda: needs a build with HB_CUDA and a visible GPU.
// automatic: cuda when both hold, else cpu. `device` selects the GPU ordinal.
Result<std::unique_ptr<Backend>> make_backend(BackendKind kind, int device = 0);

bool cuda_compiled_in();
int cuda_device_count();  // 0 without HB_CUDA or without a GPU

}  // namespace hb
