#include "src/backend/cuda_image_sink.hpp"

#include <cuda_runtime.h>

#include <array>
#include <mutex>
#include <string>
#include <utility>

#include "src/base/cuda_buffers.hpp"
#include "src/base/cuda_error.hpp"

namespace hb::cuda {
namespace {

constexpr int kStoresInFlight = 4;  // a reader's buffers: its reads run ahead of its copies

// One device block, handed out as an image and taken back when the image is let go: a
// job's scenes of one size are loaded into the same memory, with no cudaFree between
// them (it waits for the whole device, the steps beside the load included).
struct DeviceBlocks {
  int device = -1;
  std::mutex mutex;
  void* spare = nullptr;
  std::size_t spare_bytes = 0;

  ~DeviceBlocks() {
    cudaSetDevice(device);
    cudaFree(spare);
  }
  // The spare block when it holds `bytes` (its size in `bytes`), else null.
  void* take(std::size_t& bytes) {
    const std::lock_guard lock(mutex);
    if (spare == nullptr || spare_bytes < bytes) return nullptr;
    bytes = spare_bytes;
    return std::exchange(spare, nullptr);
  }
  void give_back(void* block, std::size_t bytes) {
    const std::lock_guard lock(mutex);
    cudaSetDevice(device);
    if (spare != nullptr && spare_bytes >= bytes) {
      cudaFree(block);
      return;
    }
    cudaFree(spare);
    spare = block;
    spare_bytes = bytes;
  }
};

class ImageSink final : public io::ImageSink {
 public:
  explicit ImageSink(int device) : blocks_(std::make_shared<DeviceBlocks>()) { blocks_->device = device; }
  ~ImageSink() override {
    cudaSetDevice(blocks_->device);
    for (Reader& r : readers_) {
      if (r.stream == nullptr) continue;
      cudaStreamSynchronize(r.stream);
      for (cudaEvent_t e : r.copied) cudaEventDestroy(e);
      cudaStreamDestroy(r.stream);
    }
  }

  int device() const override { return blocks_->device; }

  Result<std::shared_ptr<std::byte[]>> allocate(std::size_t bytes) override {
    cudaSetDevice(blocks_->device);
    void* block = blocks_->take(bytes);
    if (block == nullptr) {
      std::size_t free = 0, total = 0;
      if (cudaMemGetInfo(&free, &total) != cudaSuccess || bytes > free / 4)
        return Error{ErrorKind::io, {}, {}, "no room on the GPU for a scene loaded ahead"};
      HB_TRY(status(cudaMalloc(&block, bytes), "image on the GPU"));
    }
    // Let go, the block goes back to the sink's spare (or is freed when the sink is gone).
    std::weak_ptr<DeviceBlocks> home = blocks_;
    const int device = blocks_->device;
    return std::shared_ptr<std::byte[]>(static_cast<std::byte*>(block), [home, device, bytes](std::byte* p) {
      if (auto blocks = home.lock()) return blocks->give_back(p, bytes);
      cudaSetDevice(device);
      cudaFree(p);
    });
  }

  Result<std::byte*> store_buffer(int thread) override {
    Reader& r = readers_.at(static_cast<std::size_t>(thread));
    cudaSetDevice(blocks_->device);
    if (r.stream == nullptr) HB_TRY(start(r));
    r.current = (r.current + 1) % kStoresInFlight;
    HB_TRY(status(cudaEventSynchronize(r.copied[r.current]), "image store copied"));
    return r.buffers[r.current].as<std::byte>();
  }

  Status store(int thread, std::byte* image, std::int64_t at, std::span<const std::byte> part) override {
    Reader& r = readers_.at(static_cast<std::size_t>(thread));
    HB_TRY(status(cudaMemcpyAsync(image + at, part.data(), part.size(), cudaMemcpyHostToDevice, r.stream),
                  "image store to the GPU"));
    return status(cudaEventRecord(r.copied[r.current], r.stream), "image store copied");
  }

  Status finish() override {
    cudaSetDevice(blocks_->device);
    cudaError_t first = cudaSuccess;  // every stream is waited for, whatever the first one gave
    for (Reader& r : readers_) {
      if (r.stream == nullptr) continue;
      const cudaError_t synced = cudaStreamSynchronize(r.stream);
      if (first == cudaSuccess) first = synced;
    }
    return status(first, "image stores copied");
  }

 private:
  struct Reader {
    cudaStream_t stream = nullptr;
    std::array<PinnedBuffer, kStoresInFlight> buffers;
    std::array<cudaEvent_t, kStoresInFlight> copied{};
    int current = 0;
  };

  static Status start(Reader& r) {
    HB_TRY(status(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking), "image stream"));
    for (int i = 0; i < kStoresInFlight; ++i) {
      HB_TRY(status(cudaEventCreateWithFlags(&r.copied[i], cudaEventDisableTiming), "image event"));
      HB_TRY(status(r.buffers[i].reserve(io::kImageStoreBytes), "pinned image buffer"));
    }
    return {};
  }

  std::shared_ptr<DeviceBlocks> blocks_;
  std::array<Reader, io::kImageReaders> readers_;
};

}  // namespace

std::shared_ptr<io::ImageSink> make_image_sink(int device) { return std::make_shared<ImageSink>(device); }

}  // namespace hb::cuda
