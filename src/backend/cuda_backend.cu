#include "src/backend/cuda_backend.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "src/backend/cuda_image_sink.hpp"
#include "src/base/cuda_buffers.hpp"
#include "src/base/cuda_error.hpp"

namespace hb {
namespace {


class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device) : device_(device) {}
  BackendKind kind() const override { return BackendKind::cuda; }
  std::string_view name() const override { return "cuda"; }
  int gpu() const override { return device_; }
  std::string device_description() const override {
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, device_);
    return "GPU " + std::to_string(device_) + ": " + prop.name;
  }

  // Half the free memory: the rest is for other engines' buffers and the driver.
  std::int64_t tile_budget_bytes(std::int64_t wanted) const override {
    std::size_t free_bytes = 0, total = 0;
    cudaSetDevice(device_);
    if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return wanted;
    return std::max<std::int64_t>(std::int64_t{1} << 20, std::min<std::int64_t>(wanted, static_cast<std::int64_t>(free_bytes / 2)));
  }

  HostAllocator host_allocator() const override { return cuda::pinned_allocator(); }
  std::shared_ptr<io::ImageSink> image_sink() const override { return cuda::make_image_sink(device_); }

 private:
  int device_;
};

}  // namespace

int cuda_visible_devices() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) return 0;
  return count;
}

void warm_up_cuda_context(int device) {
  if (device < 0 || device >= cuda_visible_devices()) return;
  if (cudaSetDevice(device) == cudaSuccess) cudaFree(nullptr);  // cudaFree(0) creates the context
}

Result<std::unique_ptr<Backend>> make_cuda_backend(int device) {
  const int count = cuda_visible_devices();
  if (count == 0) return Error{ErrorKind::resource, {}, "--backend", "no CUDA device is visible"};
  if (device < 0 || device >= count)
    return Error{ErrorKind::resource, {}, "--device", "GPU " + std::to_string(device) + " does not exist"};
  if (auto e = cudaSetDevice(device); e != cudaSuccess) return ::hb::cuda::failure(e, "cudaSetDevice");
  return std::unique_ptr<Backend>(std::make_unique<CudaBackend>(device));
}

}  // namespace hb
