#include "src/backend/backend.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "mpi/comm.hpp"
#include "src/backend/cpu_backend.hpp"
#include "src/backend/cuda_backend.hpp"
#include "src/base/cuda_libraries.hpp"

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

// A job of one rank uses one GPU, its GPU 0 (launcher local rank 0; a process of
// another local rank keeps what it is shown). Shown only that one (the first entry of
// CUDA_VISIBLE_DEVICES, or "0"), the driver starts one device instead of every GPU of
// the host: process start to the first tile fell from 1.1 s to 0.4 s on a host of four
// (docs/PERFORMANCE.md, start-up). Ranks of a larger job keep what they are shown: four
// processes starting the driver at once took 1.1 s each with every GPU shown and up to
// 1.6 s each shown one, the driver's start being serialised between processes.
[[maybe_unused]] void show_only_gpu_zero() {
  if (mpi::launcher_local_rank() > 0) return;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string list = visible != nullptr ? visible : "0";
  const std::string first = list.substr(0, list.find(','));
  if (!first.empty()) setenv("CUDA_VISIBLE_DEVICES", first.c_str(), 1);
}

}  // namespace

void set_process_gpu(int device) { g_process_gpu.store(device, std::memory_order_relaxed); }

int process_gpu() {
  if (const int chosen = g_process_gpu.load(std::memory_order_relaxed); chosen >= 0) return chosen;
  const int gpus = cuda_device_count();
  return gpus > 0 ? std::max(0, mpi::launcher_local_rank()) % gpus : 0;
}

std::jthread warm_up_device(int ranks) {
#ifdef HB_HAVE_CUDA
  if (ranks == 1) show_only_gpu_zero();  // before the thread: setenv must not race getenv
  return std::jthread([] {
    std::jthread libraries([] { cuda::open_math_libraries(); });  // beside the context's start
    warm_up_cuda_context(process_gpu());
    libraries.join();
    cuda::prime_gemms(process_gpu());
  });
#else
  (void)ranks;
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
