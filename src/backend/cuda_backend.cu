#include "src/backend/cuda_backend.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "kernels/convert.cuh"
#include "src/base/cuda_buffers.hpp"
#include "src/backend/cuda_eigen.hpp"
#include "src/backend/cuda_mnf.hpp"

namespace hb {
namespace {

Error cuda_error(cudaError_t code, const char* what) {
  return Error{ErrorKind::resource, {}, {}, std::string(what) + ": " + cudaGetErrorString(code)};
}

// Device buffer freed on scope exit.
struct DeviceBuffer {
  void* ptr = nullptr;
  ~DeviceBuffer() { cudaFree(ptr); }
};

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device) : device_(device) {}
  BackendKind kind() const override { return BackendKind::cuda; }
  std::string_view name() const override { return "cuda"; }
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

  Result<linalg::SymmetricEigen> symmetric_eigen(const linalg::Matrix& a) override {
    if (!eigen_) eigen_ = std::make_unique<cuda::DeviceEigenSolver>(device_);
    return eigen_->solve(a);
  }

  Status convert_to_f32(const io::Tile& tile, std::span<float> out) override {
    cudaSetDevice(device_);
    const auto in = tile.bytes();
    DeviceBuffer raw, wide;
    if (auto e = cudaMalloc(&raw.ptr, in.size()); e != cudaSuccess) return cuda_error(e, "cudaMalloc");
    if (auto e = cudaMalloc(&wide.ptr, out.size_bytes()); e != cudaSuccess) return cuda_error(e, "cudaMalloc");
    if (auto e = cudaMemcpy(raw.ptr, in.data(), in.size(), cudaMemcpyHostToDevice); e != cudaSuccess)
      return cuda_error(e, "copy to device");
    const auto n = static_cast<std::size_t>(tile.pixels() * tile.bands());
    if (auto e = kernels::convert_to_f32(tile.type(), raw.ptr, static_cast<float*>(wide.ptr), n, nullptr);
        e != cudaSuccess)
      return cuda_error(e, "convert kernel");
    if (auto e = cudaMemcpy(out.data(), wide.ptr, out.size_bytes(), cudaMemcpyDeviceToHost); e != cudaSuccess)
      return cuda_error(e, "copy to host");
    return {};
  }

  HostAllocator host_allocator() const override { return cuda::pinned_allocator(); }

  Status accumulate_moments(const io::Tile& tile, const mnf::PixelRules& rules, mnf::Moments& data) override {
    return mnf_engine().accumulate_moments(tile, rules, data);
  }
  Status accumulate_noise_moments(const io::Tile& tile, const mnf::PixelRules& rules,
                                  const mnf::NoiseConfig& config, mnf::Moments& noise) override {
    return mnf_engine().accumulate_noise_moments(tile, rules, config, noise);
  }
  Status finish_moments() override { return mnf_ ? mnf_->finish_moments() : Status{}; }
  Status transform(const io::Tile& tile, const mnf::PixelRules& rules, const mnf::LinearMap& map,
                   std::span<float> out) override {
    return mnf_engine().transform(tile, rules, map, out);
  }

 private:
  cuda::MnfEngine& mnf_engine() {
    if (!mnf_) mnf_ = std::make_unique<cuda::MnfEngine>(device_);
    return *mnf_;
  }

  int device_;
  std::unique_ptr<cuda::MnfEngine> mnf_;
  std::unique_ptr<cuda::DeviceEigenSolver> eigen_;
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
  if (auto e = cudaSetDevice(device); e != cudaSuccess) return cuda_error(e, "cudaSetDevice");
  return std::unique_ptr<Backend>(std::make_unique<CudaBackend>(device));
}

}  // namespace hb
