#include "src/knn/cuda_query_gather.hpp"

#include <algorithm>
#include <climits>

#include "kernels/convert.cuh"
#include "src/base/cuda_error.hpp"

namespace hb::knn {
namespace {

Status check_dims(std::size_t dims) {
  if (dims < 1 || dims > INT_MAX) return Error{ErrorKind::usage, {}, "features", "no or too many features for the GPU"};
  return {};
}

}  // namespace

DeviceQueryGather::~DeviceQueryGather() {
  for (auto* e : {start_[0], start_[1], done_[0], done_[1]})
    if (e) cudaEventDestroy(e);
  if (stream_) cudaStreamDestroy(stream_);
}

Status DeviceQueryGather::init() {
  HB_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  for (auto* e : {&start_[0], &start_[1], &done_[0], &done_[1]}) HB_CUDA_TRY(cudaEventCreate(e), "cudaEventCreate");
  return {};
}

bool DeviceQueryGather::reserve(int slot, std::size_t tile_bytes, std::int64_t rows, std::int64_t dims) {
  const auto list_bytes = static_cast<std::size_t>(std::max<std::int64_t>(rows, 1)) * 8;
  const bool room = raw_[slot].reserve(tile_bytes) == cudaSuccess && pixels_[slot].reserve(list_bytes) == cudaSuccess &&
                    bands_[slot].reserve(static_cast<std::size_t>(dims) * 8) == cudaSuccess &&
                    shift_[slot].reserve(static_cast<std::size_t>(dims) * 8) == cudaSuccess &&
                    queries_[slot].reserve(static_cast<std::size_t>(std::max<std::int64_t>(rows * dims, 1)) * 4) ==
                        cudaSuccess;
  if (!room) cudaGetLastError();
  return room;
}

Status DeviceQueryGather::upload(int slot, const io::Tile& tile, std::span<const std::int64_t> bands,
                                 std::span<const double> shift) {
  HB_CUDA_TRY(cudaEventRecord(start_[slot], stream_), "cudaEventRecord");
  HB_CUDA_TRY(cudaMemcpyAsync(raw_[slot].as<void>(), tile.bytes().data(), tile.bytes().size(), cudaMemcpyHostToDevice,
                              stream_),
              "copy query tile");
  HB_CUDA_TRY(cudaMemcpyAsync(bands_[slot].as<void>(), bands.data(), bands.size_bytes(), cudaMemcpyHostToDevice, stream_),
              "copy query bands");
  if (!shift.empty())
    HB_CUDA_TRY(cudaMemcpyAsync(shift_[slot].as<double>(), shift.data(), shift.size_bytes(), cudaMemcpyHostToDevice,
                                stream_),
                "copy query shift");
  return upload_units(slot, tile.units(), bands);
}

// Each feature's gain and offset (its band's), when the tile's samples stand for
// physical ones: [gain of every feature, offset of every feature].
Status DeviceQueryGather::upload_units(int slot, const io::StoredUnits* units, std::span<const std::int64_t> bands) {
  if (units == nullptr) return {};
  auto& host = feature_units_[slot];
  host.resize(2 * bands.size());
  for (std::size_t f = 0; f < bands.size(); ++f) {
    host[f] = units->gain[static_cast<std::size_t>(bands[f])];
    host[bands.size() + f] = units->offset[static_cast<std::size_t>(bands[f])];
  }
  HB_CUDA_TRY(units_[slot].reserve(host.size() * sizeof(double)), "cudaMalloc");
  HB_CUDA_TRY(cudaMemcpyAsync(units_[slot].as<double>(), host.data(), host.size() * sizeof(double),
                              cudaMemcpyHostToDevice, stream_),
              "copy query units");
  return {};
}

Status DeviceQueryGather::gather_rows(int slot, const io::Tile& tile, std::int64_t rows, int dims, bool shifted) {
  kernels::QueryScaling scaling;
  if (shifted) scaling.shift = shift_[slot].as<double>();
  if (tile.units() != nullptr) {
    scaling.gain = units_[slot].as<double>();
    scaling.offset = scaling.gain + dims;
  }
  HB_CUDA_TRY(kernels::gather_queries(tile.type(), raw_[slot].as<void>(), tile.bands(), pixels_[slot].as<std::int64_t>(),
                                      rows, bands_[slot].as<std::int64_t>(), dims, scaling, queries_[slot].as<float>(),
                                      stream_),
              "gathering kernel");
  HB_CUDA_TRY(cudaEventRecord(done_[slot], stream_), "cudaEventRecord");
  return {};
}

Result<const float*> DeviceQueryGather::gather(int slot, const io::Tile& tile, std::span<const std::int64_t> pixel,
                                               std::span<const std::int64_t> bands, std::span<const double> shift) {
  slot &= 1;
  HB_TRY(check_dims(bands.size()));
  const auto rows = static_cast<std::int64_t>(pixel.size());
  const auto dims = static_cast<std::int64_t>(bands.size());
  if (!reserve(slot, tile.bytes().size(), rows, dims)) return static_cast<const float*>(nullptr);
  HB_TRY(upload(slot, tile, bands, shift));
  HB_CUDA_TRY(cudaMemcpyAsync(pixels_[slot].as<void>(), pixel.data(), pixel.size_bytes(), cudaMemcpyHostToDevice, stream_),
              "copy query pixels");
  HB_TRY(gather_rows(slot, tile, rows, static_cast<int>(dims), !shift.empty()));
  HB_CUDA_TRY(cudaEventSynchronize(done_[slot]), "gathering queries");
  untimed_[slot] = true;
  return static_cast<const float*>(queries_[slot].as<float>());
}

Result<const float*> DeviceQueryGather::list_and_gather(int slot, const io::Tile& tile,
                                                        std::span<const std::int64_t> bands,
                                                        const kernels::UnusableSample& unusable,
                                                        std::span<const double> shift, std::vector<std::int64_t>& pixel) {
  slot &= 1;
  HB_TRY(check_dims(bands.size()));
  const std::int64_t pixels = tile.pixels();
  const auto dims = static_cast<std::int64_t>(bands.size());
  const std::size_t scratch = kernels::valid_pixel_scratch_bytes(pixels);
  const auto list_bytes = static_cast<std::size_t>(std::max<std::int64_t>(pixels, 1)) * 8;
  if (!reserve(slot, tile.bytes().size(), pixels, dims) ||
      flags_[slot].reserve(static_cast<std::size_t>(std::max<std::int64_t>(pixels, 1))) != cudaSuccess ||
      scratch_[slot].reserve(scratch) != cudaSuccess || count_[slot].reserve(8) != cudaSuccess ||
      host_count_[slot].reserve(8) != cudaSuccess || host_pixels_[slot].reserve(list_bytes) != cudaSuccess) {
    cudaGetLastError();
    return static_cast<const float*>(nullptr);
  }
  HB_TRY(upload(slot, tile, bands, shift));
  HB_CUDA_TRY(kernels::list_valid_pixels(tile.type(), raw_[slot].as<void>(), pixels, tile.bands(),
                                         bands_[slot].as<std::int64_t>(), static_cast<int>(dims), unusable,
                                         flags_[slot].as<std::uint8_t>(), scratch_[slot].as<void>(), scratch,
                                         pixels_[slot].as<std::int64_t>(), count_[slot].as<std::int64_t>(), stream_),
              "listing valid pixels");
  auto* count = host_count_[slot].as<std::int64_t>();
  HB_CUDA_TRY(cudaMemcpyAsync(count, count_[slot].as<void>(), 8, cudaMemcpyDeviceToHost, stream_), "copy pixel count");
  HB_CUDA_TRY(cudaStreamSynchronize(stream_), "listing valid pixels");
  const std::int64_t rows = *count;
  HB_TRY(gather_rows(slot, tile, rows, static_cast<int>(dims), !shift.empty()));
  auto* listed = host_pixels_[slot].as<std::int64_t>();
  HB_CUDA_TRY(cudaMemcpyAsync(listed, pixels_[slot].as<void>(), static_cast<std::size_t>(rows) * 8,
                              cudaMemcpyDeviceToHost, stream_),
              "copy pixel list");
  HB_CUDA_TRY(cudaStreamSynchronize(stream_), "gathering queries");
  pixel.assign(listed, listed + rows);
  untimed_[slot] = true;
  return static_cast<const float*>(queries_[slot].as<float>());
}

int DeviceQueryGather::slot_of(const float* queries) const {
  if (queries == nullptr) return -1;
  return queries == queries_[0].as<float>() ? 0 : queries == queries_[1].as<float>() ? 1 : -1;
}

Result<double> DeviceQueryGather::take_gpu_seconds(int slot) {
  slot &= 1;
  if (!untimed_[slot]) return 0.0;
  float ms = 0.0f;
  HB_CUDA_TRY(cudaEventElapsedTime(&ms, start_[slot], done_[slot]), "cudaEventElapsedTime");
  untimed_[slot] = false;
  return ms / 1e3;
}

}  // namespace hb::knn
