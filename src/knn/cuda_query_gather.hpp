// Query tiles gathered on the GPU (CudaKnnSearch::gather and list_and_gather, for
// u8/i16/u16 and f32 scenes): per slot, the raw tile as read goes up on a stream of
// their own, its valid pixels are listed there (kernels::list_valid_pixels) or their
// list comes with it, and kernels::gather_queries picks, widens (into physical units
// when the tile carries io::StoredUnits) and shifts the queries, with the host's bits.
// Two slots: the worker gathers the next tile while the search reads one.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <span>
#include <vector>

#include "io/tile.hpp"
#include "kernels/valid_pixels.cuh"
#include "src/base/cuda_buffers.hpp"
#include "src/base/error.hpp"

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
  // gather() of the tile's valid pixels, listed on the device: a pixel is out when one
  // of the used `bands` is `unusable`; the list, ascending, is also copied to `pixel`.
  // nullptr when the device has no room.
  Result<const float*> list_and_gather(int slot, const io::Tile& tile, std::span<const std::int64_t> bands,
                                       const kernels::UnusableSample& unusable, std::span<const double> shift,
                                       std::vector<std::int64_t>& pixel);
  // The slot whose queries start at `queries`, or -1 when gather() did not make them.
  int slot_of(const float* queries) const;
  // Recorded on the gathering stream once the slot's queries are made.
  cudaEvent_t done(int slot) const { return done_[slot & 1]; }
  // GPU seconds of the slot's last gathering, counted once (0 when already counted).
  Result<double> take_gpu_seconds(int slot);

 private:
  // Room for a tile of `tile_bytes`, a list of `rows` pixels and their queries.
  bool reserve(int slot, std::size_t tile_bytes, std::int64_t rows, std::int64_t dims);
  Status upload(int slot, const io::Tile& tile, std::span<const std::int64_t> bands, std::span<const double> shift);
  Status upload_units(int slot, const io::StoredUnits* units, std::span<const std::int64_t> bands);
  // The queries of the slot's first `rows` listed pixels, then done_[slot] recorded.
  Status gather_rows(int slot, const io::Tile& tile, std::int64_t rows, int dims, bool shifted);

  cudaStream_t stream_ = nullptr;
  // Per slot: the raw tile, its pixel list, the bands, the shift, the queries.
  cuda::DeviceBuffer raw_[2], pixels_[2], bands_[2], shift_[2], queries_[2];
  // Per slot, for tiles of stored numbers (io::StoredUnits): each feature's gain, then
  // each feature's offset, on the device and as made on the host.
  cuda::DeviceBuffer units_[2];
  std::vector<double> feature_units_[2];
  // list_and_gather() per slot: flags, the selection's scratch, the count; the count
  // and the list home.
  cuda::DeviceBuffer flags_[2], scratch_[2], count_[2];
  cuda::PinnedBuffer host_count_[2], host_pixels_[2];
  cudaEvent_t start_[2] = {nullptr, nullptr};
  cudaEvent_t done_[2] = {nullptr, nullptr};
  bool untimed_[2] = {false, false};
};

}  // namespace hb::knn
