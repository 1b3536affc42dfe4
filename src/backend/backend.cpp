#include "src/backend/backend.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>

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

namespace {
std::atomic<int> g_process_gpu{kProcessGpu};
}

void set_process_gpu(int device) { g_process_gpu.store(device, std::memory_order_relaxed); }

int process_gpu() {
  if (const int chosen = g_process_gpu.load(std::memory_order_relaxed); chosen >= 0) return chosen;
  int local_rank = 0;
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID"})
    if (const char* value = std::getenv(name)) {
      local_rank = std::max(0, std::atoi(value));
      break;
    }
  const int gpus = cuda_device_count();
  return gpus > 0 ? local_rank % gpus : 0;
}

std::jthread warm_up_device() {
#ifdef HB_HAVE_CUDA
  return std::jthread([] { warm_up_cuda_context(process_gpu()); });
#else
  return {};
#endif
}

Result<std::unique_ptr<Backend>> make_backend(BackendKind kind, int device) {
  if (kind == BackendKind::cpu) return make_cpu_backend();
#ifdef HB_HAVE_CUDA
  if (kind == BackendKind::cuda || cuda_visible_devices() > 0)
    return make_cuda_backend(resolve_gpu(device));
#else
  (void)device;
  if (kind == BackendKind::cuda)
    return Error{ErrorKind::usage, {}, "--backend", "this build has no CUDA backend (configure with HB_CUDA=ON)"};
#endif
  return make_cpu_backend();
}

}  // namespace hb
