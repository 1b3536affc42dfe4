// A device allocation freed on scope exit: the staging buffers of the host-side launchers.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <span>

#include "src/base/cuda_error.hpp"

namespace hb::hash::detail {

template <class T>
struct DeviceArray {
  T* data = nullptr;
  DeviceArray() = default;
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  ~DeviceArray() { cudaFree(data); }
  Status allocate(std::size_t n) {
    return cuda::status(cudaMalloc(&data, std::max<std::size_t>(n, 1) * sizeof(T)), "cudaMalloc");
  }
  Status upload(std::span<const T> host) {
    HB_TRY(allocate(host.size()));
    return cuda::status(cudaMemcpy(data, host.data(), host.size_bytes(), cudaMemcpyHostToDevice), "upload");
  }
};

}  // namespace hb::hash::detail
