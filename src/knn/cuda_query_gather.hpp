// Query tiles gathered on the GPU (CudaKnnSearch::gather, for u8/i16/u16 scenes): per
// slot, the raw tile as read and its valid-pixel list go up on a stream of their own,
// and kernels::gather_queries picks, widens and shifts the queries there, with the
// host's bits. Two slots: the worker gathers the next tile while the search reads one.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <span>

#include "io/error.hpp"
#include "io/tile.hpp"
#include "src/backend/cuda_device_buffers.hpp"

namespace hb::knn {

class DeviceQueryGather {
 public:
  DeviceQueryGather() = default;
  ~DeviceQueryGather();
  DeviceQueryGather(const DeviceQueryGather&) = delete;
  DeviceQueryGather& operator=(const DeviceQueryGather&) = delete;

  // The stream and events, on the current device.
  Status init();
  // Slot `slot`'s queries, made on the current device before it returns (the caller
  // may then reuse the tile); nullptr when the device has no room for them.
  Result<const float*> gather(int slot, const io::Tile& tile, std::span<const std::int64_t> pixel,
                              std::span<const std::int64_t> bands, std::span<const double> shift);
  // The slot whose queries start at `queries`, or -1 when gather() did not make them.
  int slot_of(const float* queries) const;
  // Recorded on the gathering stream once the slot's queries are made.
  cudaEvent_t done(int slot) const { return done_[slot & 1]; }
  // GPU seconds of the slot's last gathering, counted once (0 when already counted).
  Result<double> take_gpu_seconds(int slot);

 private:
  cudaStream_t stream_ = nullptr;
  // Per slot: the raw tile, its pixel list, the bands, the shift, the queries.
  cuda::DeviceBuffer raw_[2], pixels_[2], bands_[2], shift_[2], queries_[2];
  cudaEvent_t start_[2] = {nullptr, nullptr};
  cudaEvent_t done_[2] = {nullptr, nullptr};
  bool untimed_[2] = {false, false};
};

}  // namespace hb::knn
