#include "src/mnf/tile_ops.hpp"

#include "src/mnf/cpu_tile_ops.hpp"
#ifdef HB_HAVE_CUDA
#include "src/mnf/cuda_tile_ops.hpp"
#endif

namespace hb::mnf {

std::unique_ptr<TileOps> make_tile_ops(std::unique_ptr<Backend> device) {
#ifdef HB_HAVE_CUDA
  if (device->kind() == BackendKind::cuda) return cuda::make_mnf_tile_ops(std::move(device));
#endif
  return make_cpu_tile_ops(std::move(device));
}

Result<std::unique_ptr<TileOps>> make_tile_ops(BackendKind kind, int gpu) {
  auto device = make_backend(kind, gpu);
  if (!device) return device.error();
  return make_tile_ops(std::move(*device));
}

}  // namespace hb::mnf
