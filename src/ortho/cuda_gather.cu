// The CUDA half of the gather: the source rows and the tile's GLT entries cross to the
// device, kernels/ortho gathers, the grid tile comes back. Source tiles are read into
// pinned memory (host_allocator), so they cross without a staging copy.
#include <string>

#include "kernels/ortho/gather.cuh"
#include "src/base/cuda_buffers.hpp"
#include "src/base/cuda_error.hpp"
#include "src/ortho/cuda_gather.hpp"

namespace hb::ortho {
namespace {

class CudaGatherer final : public Gatherer {
 public:
  CudaGatherer(int device, std::unique_ptr<Backend> backend) : device_(device), backend_(std::move(backend)) {}
  ~CudaGatherer() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  CudaGatherer(const CudaGatherer&) = delete;
  CudaGatherer& operator=(const CudaGatherer&) = delete;

  Status init() {
    HB_CUDA_TRY(cudaSetDevice(device_), "cudaSetDevice");
    HB_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    return {};
  }

  std::string_view backend_name() const override { return "cuda"; }
  HostAllocator host_allocator() const override { return backend_->host_allocator(); }

  Status gather(const GatherTile& t, std::span<std::byte> out) override {
    HB_CUDA_TRY(cudaSetDevice(device_), "cudaSetDevice");
    const auto index_bytes = static_cast<std::size_t>(t.pixels) * sizeof(std::int32_t);
    HB_CUDA_TRY(source_.reserve(std::max<std::size_t>(t.source.size(), 1)), "cudaMalloc (source rows)");
    HB_CUDA_TRY(sample_.reserve(std::max<std::size_t>(index_bytes, 1)), "cudaMalloc (GLT)");
    HB_CUDA_TRY(line_.reserve(std::max<std::size_t>(index_bytes, 1)), "cudaMalloc (GLT)");
    HB_CUDA_TRY(fill_.reserve(t.fill.size()), "cudaMalloc (fill)");
    HB_CUDA_TRY(out_.reserve(std::max<std::size_t>(out.size(), 1)), "cudaMalloc (grid tile)");
    HB_CUDA_TRY(cudaMemcpyAsync(source_.as<void>(), t.source.data(), t.source.size(), cudaMemcpyHostToDevice, stream_),
                "copy source rows");
    HB_CUDA_TRY(cudaMemcpyAsync(sample_.as<void>(), t.glt->sample.data() + t.first_pixel, index_bytes,
                                cudaMemcpyHostToDevice, stream_), "copy GLT");
    HB_CUDA_TRY(cudaMemcpyAsync(line_.as<void>(), t.glt->line.data() + t.first_pixel, index_bytes,
                                cudaMemcpyHostToDevice, stream_), "copy GLT");
    HB_CUDA_TRY(cudaMemcpyAsync(fill_.as<void>(), t.fill.data(), t.fill.size(), cudaMemcpyHostToDevice, stream_),
                "copy fill");
    const kernels::ortho::GatherArgs args{source_.as<const std::byte>(), t.source_rows.begin, t.source_samples,
                                          sample_.as<const std::int32_t>(), line_.as<const std::int32_t>(),
                                          fill_.as<const std::byte>(), out_.as<std::byte>(), t.pixels, t.pixel_bytes};
    HB_CUDA_TRY(kernels::ortho::launch_gather(args, stream_), "gather kernel");
    HB_CUDA_TRY(cudaMemcpyAsync(out.data(), out_.as<void>(), out.size(), cudaMemcpyDeviceToHost, stream_),
                "copy grid tile");
    HB_CUDA_TRY(cudaStreamSynchronize(stream_), "gather");
    return {};
  }

 private:
  int device_;
  std::unique_ptr<Backend> backend_;
  cudaStream_t stream_ = nullptr;
  cuda::DeviceBuffer source_, sample_, line_, fill_, out_;
};

}  // namespace

Result<std::unique_ptr<Gatherer>> make_cuda_gatherer(int device) {
  device = resolve_gpu(device);
  auto backend = make_backend(BackendKind::cuda, device);
  if (!backend) return backend.error();
  auto gatherer = std::make_unique<CudaGatherer>(device, std::move(*backend));
  HB_TRY(gatherer->init());
  return std::unique_ptr<Gatherer>(std::move(gatherer));
}

}  // namespace hb::ortho
