#include "src/backend/backend.hpp"

#include "src/backend/cpu_backend.hpp"
#include "src/backend/cuda_backend.hpp"

namespace hb {

std::optional<BackendKind> backend_kind_from_name(std::string_view name) {
  if (name == "auto") return BackendKind::automatic;
  if (name == "cpu") return BackendKind::cpu;
  if (name == "cuda" || name == "gpu") return BackendKind::cuda;
  return std::nullopt;
}

bool cuda_compiled_in() {
#ifdef HB_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

int cuda_device_count() {
#ifdef HB_HAVE_CUDA
  return cuda_visible_devices();
#else
  return 0;
#endif
}

Result<std::unique_ptr<Backend>> make_backend(BackendKind kind, int device) {
  if (kind == BackendKind::cpu) return make_cpu_backend();
#ifdef HB_HAVE_CUDA
  if (kind == BackendKind::cuda || cuda_visible_devices() > 0) return make_cuda_backend(device);
#else
  (void)device;
  if (kind == BackendKind::cuda)
    return Error{ErrorKind::usage, {}, "--backend", "this build has no CUDA backend (configure with HB_CUDA=ON)"};
#endif
  return make_cpu_backend();
}

}  // namespace hb
