// Grow-only device and pinned host buffers for the CUDA backend: a run of tiles of the
// same size allocates once.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <memory>
#include <memory_resource>
#include <new>

#include "src/base/pinned_pool.hpp"
#include "src/base/row_range.hpp"

namespace hb::cuda {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Ensures at least `bytes`; contents are not kept when it grows.
  cudaError_t reserve(std::size_t bytes) {
    if (bytes <= bytes_) return cudaSuccess;
    cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
    if (auto e = cudaMalloc(&ptr_, bytes); e != cudaSuccess) return e;
    bytes_ = bytes;
    return cudaSuccess;
  }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }
  // Gives the memory back to the device now.
  void release() {
    cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { pinned_free(ptr_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  cudaError_t reserve(std::size_t bytes) {
    if (bytes <= bytes_) return cudaSuccess;
    pinned_free(ptr_);
    bytes_ = 0;
    ptr_ = pinned_allocate(bytes);
    if (ptr_ == nullptr) return cudaErrorMemoryAllocation;
    bytes_ = bytes;
    return cudaSuccess;
  }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Pinned host memory for tiles that cross to a device (pageable when none is left: the
// copy engine then stages it).
inline HostAllocator pinned_allocator() {
  return [](std::size_t bytes) -> std::shared_ptr<std::byte[]> {
    void* pinned = pinned_allocate(bytes);
    if (pinned == nullptr) return std::make_shared<std::byte[]>(bytes);
    return std::shared_ptr<std::byte[]>(static_cast<std::byte*>(pinned), [](std::byte* p) { pinned_free(p); });
  };
}

// Pinned host memory as a std::pmr resource (the running KNN lists, TopK), from the
// pool; pageable when none is left (or for over-aligned requests), told apart again
// when freed.
class PinnedMemoryResource final : public std::pmr::memory_resource {
 private:
  void* do_allocate(std::size_t bytes, std::size_t alignment) override {
    if (alignment <= 256)
      if (void* pinned = pinned_allocate(bytes)) return pinned;
    return ::operator new(bytes, std::align_val_t{alignment});
  }
  void do_deallocate(void* p, std::size_t bytes, std::size_t alignment) override {
    if (pinned_owns(p)) {
      pinned_free(p);
      return;
    }
    ::operator delete(p, bytes, std::align_val_t{alignment});
  }
  bool do_is_equal(const std::pmr::memory_resource& other) const noexcept override { return this == &other; }
};

inline std::pmr::memory_resource* pinned_memory() {
  static PinnedMemoryResource resource;
  return &resource;
}

}  // namespace hb::cuda
