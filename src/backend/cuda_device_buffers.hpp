// Grow-only device and pinned host buffers for the CUDA backend: a run of tiles of the
// same size allocates once.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

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

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  ~PinnedBuffer() { cudaFreeHost(ptr_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  cudaError_t reserve(std::size_t bytes) {
    if (bytes <= bytes_) return cudaSuccess;
    cudaFreeHost(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
    if (auto e = cudaMallocHost(&ptr_, bytes); e != cudaSuccess) return e;
    bytes_ = bytes;
    return cudaSuccess;
  }
  template <class T>
  T* as() const { return static_cast<T*>(ptr_); }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace hb::cuda
