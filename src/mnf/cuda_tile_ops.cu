#include "src/mnf/cuda_tile_ops.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "kernels/convert.cuh"
#include "kernels/mnf/moments.cuh"
#include "src/base/cuda_error.hpp"
#include "src/base/stopwatch.hpp"
#include "src/mnf/linear_map.hpp"
#include "src/mnf/stats.hpp"

namespace hb::cuda {
namespace {

namespace km = hb::kernels::mnf;

Status check(cudaError_t e, const char* what) { return status(e, what); }
Status check(cublasStatus_t s, const char* what) { return status(s, what); }
Status check(const km::LaunchStatus& s, const char* what) {
  if (s.ok()) return {};
  return Error{ErrorKind::internal, {}, "cuda", std::string(what) + ": " + s.message()};
}

// Z64 + offset rounded once to float32; excluded pixels get the fill value.
__global__ void finish_transform(const double* __restrict__ z, const double* __restrict__ offset,
                                 const std::uint8_t* __restrict__ valid, std::int64_t pixels, int outputs,
                                 float fill, float* __restrict__ out) {
  const std::int64_t n = pixels * outputs;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x) {
    const std::int64_t p = i / outputs;
    const int j = static_cast<int>(i - p * outputs);
    out[i] = valid[p] ? static_cast<float>(z[i] + (offset ? offset[j] : 0.0)) : fill;
  }
}

// A tile of stored numbers is float32 on the device, made physical there (upload_tile).
km::TileView view_of(const MnfTileOps::TileShape& tile, const void* device_data, std::int64_t lines) {
  km::TileView v;
  v.type = tile.physical ? DataType::f32 : tile.type;
  v.data = device_data;
  v.samples = tile.samples;
  v.bands = tile.bands;
  v.lines = lines;
  v.held_row0 = tile.held.begin;
  v.held_rows = tile.held.rows();
  v.core_row0 = tile.core.begin;
  v.core_rows = tile.core.rows();
  return v;
}

km::NoiseWindow window_of(const mnf::Window& w) {
  km::NoiseWindow out;
  if (w.row_begin) out.row_begin = *w.row_begin;
  if (w.row_end) out.row_end = *w.row_end;
  if (w.col_begin) out.col_begin = *w.col_begin;
  if (w.col_end) out.col_end = *w.col_end;
  return out;
}

km::PixelRules rules_of(const mnf::PixelRules& rules, const int* device_bands) {
  km::PixelRules out;
  out.good_bands = device_bands;
  out.nb = static_cast<int>(rules.bands.size());
  out.has_ignore = rules.ignore_value.has_value();
  out.ignore_value = rules.ignore_value.value_or(0.0);
  return out;
}

}  // namespace

MnfTileOps::MnfTileOps(std::unique_ptr<Backend> device)
    : TileOps(std::move(device)), device_(this->device().gpu()), eigen_(device_) {
  cudaSetDevice(device_);
  cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking);
  for (int i = 0; i < 2; ++i) {
    cudaEventCreateWithFlags(&copied_[i], cudaEventDisableTiming);
    cudaEventCreateWithFlags(&released_[i], cudaEventDisableTiming);
  }
  cublasCreate(&cublas_);
  steps_.enable(debug_logging());
}

MnfTileOps::~MnfTileOps() {
  cudaSetDevice(device_);
  steps_.collect();
  if (waits_.copy_seconds > 0) log_host_waits(waits_, steps_.seconds());
  if (stream_) cudaStreamSynchronize(stream_);
  if (copy_stream_) cudaStreamSynchronize(copy_stream_);
  if (cublas_) cublasDestroy(cublas_);
  for (int i = 0; i < 2; ++i) {
    if (copied_[i]) cudaEventDestroy(copied_[i]);
    if (released_[i]) cudaEventDestroy(released_[i]);
  }
  if (copy_stream_) cudaStreamDestroy(copy_stream_);
  if (stream_) cudaStreamDestroy(stream_);
}

// Copies the raw tile once into the free device slot, on the copy stream, while the
// kernels of the previous tile may still run; calls that follow on the same tile
// (statistics, then noise) reuse it. Returns when the copy is done, so that the reader
// may refill the host buffer; the kernels are not waited for.
Status MnfTileOps::upload_tile(const io::Tile& tile) {
  const TileKey key{tile.bytes().data(), tile.bytes().size(), tile.held()};
  if (key == resident_[current_]) return {};
  const int slot = 1 - current_;
  resident_[slot] = {};
  mask_ready_ = false;
  const auto bytes = tile.bytes().size();
  // The slot was last read by the kernels of the tile before the previous one.
  HB_TRY(check(cudaStreamWaitEvent(copy_stream_, released_[slot], 0), "wait for tile buffer"));
  const auto samples = static_cast<std::size_t>(tile.pixels() * tile.bands());
  HB_TRY(check(raw_[slot].reserve(tile.units() ? samples * sizeof(float) : bytes), "tile buffer"));
  const void* source = tile.bytes().data();
  if (tile.device() != -1 && tile.device() != device_)
    return Error{ErrorKind::internal, {}, {}, "a tile in another GPU's memory"};
  cudaPointerAttributes attributes{};
  const bool pinned = tile.device() == device_ || (cudaPointerGetAttributes(&attributes, source) == cudaSuccess &&
                                                   attributes.type == cudaMemoryTypeHost);
  if (!pinned) {  // pageable tile: one host copy into pinned memory first
    HB_TRY(check(staging_.reserve(bytes), "pinned staging buffer"));
    const Stopwatch copying;
    std::memcpy(staging_.as<void>(), source, bytes);
    waits_.staging_seconds += copying.seconds();
    waits_.staged_bytes += static_cast<double>(bytes);
    source = staging_.as<void>();
  }
  if (tile.units()) HB_TRY(check(stored_.reserve(bytes), "tile buffer"));
  void* copy_to = tile.units() ? stored_.as<void>() : raw_[slot].as<void>();
  steps_.begin(copy_stream_);
  // A tile borrowed from a scene loaded into this GPU's memory is copied on the device.
  HB_TRY(check(cudaMemcpyAsync(copy_to, source, bytes, cudaMemcpyDefault, copy_stream_), "copy tile to device"));
  if (keeping_) HB_TRY(keep_copy(tile, copy_to));
  if (tile.units())
    HB_TRY(make_physical(tile.type(), tile.pixels(), tile.bands(), *tile.units(), stored_.as<void>(), slot));
  steps_.end(copy_stream_, kTileCopy);
  HB_TRY(check(cudaEventRecord(copied_[slot], copy_stream_), "record tile copy"));
  HB_TRY(check(cudaStreamWaitEvent(stream_, copied_[slot], 0), "order kernels after the copy"));
  const Stopwatch waiting;
  HB_TRY(check(cudaEventSynchronize(copied_[slot]), "copy tile to device"));
  waits_.copy_seconds += waiting.seconds();
  current_ = slot;
  resident_[slot] = key;
  return {};
}

// Stored numbers on the device (just copied into stored_, or kept) made physical in the
// slot, on the copy stream (the next copy into stored_ waits for it there). The units go
// up when they change.
Status MnfTileOps::make_physical(DataType type, std::int64_t pixels, std::int64_t tile_bands,
                                 const io::StoredUnits& units, const void* stored, int slot) {
  const auto bands = static_cast<std::size_t>(tile_bands);
  if (units.gain.size() != bands || units.offset.size() != bands)
    return Error{ErrorKind::internal, {}, {}, "tile units do not match its bands"};
  std::vector<double> packed(units.gain);
  packed.insert(packed.end(), units.offset.begin(), units.offset.end());
  if (packed != units_on_device_) {  // by content: another scene's units may reuse the address
    HB_TRY(check(units_.reserve(packed.size() * sizeof(double)), "units"));
    HB_TRY(check(cudaMemcpyAsync(units_.as<void>(), packed.data(), packed.size() * sizeof(double),
                                 cudaMemcpyHostToDevice, copy_stream_), "copy units"));
    HB_TRY(check(cudaStreamSynchronize(copy_stream_), "copy units"));
    units_on_device_ = std::move(packed);
  }
  const auto* gain = units_.as<double>();
  return check(kernels::physical_to_f32(type, stored, tile_bands, gain, gain + bands, units.ignore.has_value(),
                                        units.ignore.value_or(0.0), raw_[slot].as<float>(),
                                        static_cast<std::size_t>(pixels) * bands, copy_stream_),
               "make samples physical");
}

// Marks the current slot free for a later copy once the kernels queued so far are done.
Status MnfTileOps::release_tile() {
  return check(cudaEventRecord(released_[current_], stream_), "record tile use");
}

Status MnfTileOps::upload_rules(const TileShape& tile, const mnf::PixelRules& rules) {
  std::vector<int> bands(rules.bands.begin(), rules.bands.end());
  if (bands != rules_bands_) {
    HB_TRY(check(good_bands_.reserve(bands.size() * sizeof(int)), "band list"));
    HB_TRY(check(cudaMemcpyAsync(good_bands_.as<int>(), bands.data(), bands.size() * sizeof(int),
                                 cudaMemcpyHostToDevice, stream_),
                 "copy band list"));
    rules_bands_ = std::move(bands);
    mask_ready_ = false;
  }
  HB_TRY(check(valid_.reserve(static_cast<std::size_t>(tile.pixels())), "mask buffer"));
  return {};
}

Status MnfTileOps::reserve_matrices(std::int64_t core_pixels, std::int64_t columns) {
  const auto nb = static_cast<int>(rules_bands_.size());
  HB_TRY(check(matrix_.reserve(static_cast<std::size_t>(core_pixels * nb) * sizeof(double)), "matrix buffer"));
  HB_TRY(check(workspace_.reserve(km::moments_workspace_bytes(core_pixels, nb)), "workspace"));
  HB_TRY(check(count_.reserve(sizeof(unsigned long long)), "moments"));
  HB_TRY(check(sum_.reserve(static_cast<std::size_t>(nb) * sizeof(double)), "moments"));
  HB_TRY(check(cross_.reserve(static_cast<std::size_t>(nb) * nb * sizeof(double)), "moments"));
  const auto shift_bytes = shift_.bytes();
  HB_TRY(check(shift_.reserve(static_cast<std::size_t>(std::max<std::int64_t>(nb, columns)) * sizeof(double)),
               "shift"));
  if (shift_.bytes() != shift_bytes) shift_on_device_.clear();  // regrown: contents lost
  return {};
}

// The mask is computed once per tile and band list: statistics, noise and transform
// calls on the same tile share it.
Status MnfTileOps::ensure_mask(const TileShape& tile, const mnf::PixelRules& rules) {
  if (mask_ready_) return {};
  const auto view = view_of(tile, raw_[current_].as<void>(), tile.held.end);
  steps_.begin(stream_);
  HB_TRY(check(km::exclusion_mask(view, rules_of(rules, good_bands_.as<int>()), valid_.as<std::uint8_t>(), stream_),
               "exclusion mask"));
  steps_.end(stream_, kMask);
  mask_ready_ = true;
  return {};
}

namespace {

Status zero_moments(DeviceBuffer& count, DeviceBuffer& sum, DeviceBuffer& cross, int nb, cudaStream_t s) {
  if (cudaMemsetAsync(count.as<void>(), 0, sizeof(unsigned long long), s) != cudaSuccess ||
      cudaMemsetAsync(sum.as<void>(), 0, static_cast<std::size_t>(nb) * sizeof(double), s) != cudaSuccess ||
      cudaMemsetAsync(cross.as<void>(), 0, static_cast<std::size_t>(nb) * nb * sizeof(double), s) != cudaSuccess)
    return Error{ErrorKind::internal, {}, "cuda", "moments: cannot clear"};
  return {};
}


}  // namespace

Status MnfTileOps::accumulate_moments(const io::Tile& stored, const mnf::PixelRules& rules, mnf::Moments& data) {
  cudaSetDevice(device_);
  HB_TRY(upload_tile(stored));
  const TileShape tile = shape_of(stored);
  HB_TRY(upload_rules(tile, rules));
  const auto view = view_of(tile, raw_[current_].as<void>(), tile.held.end);  // lines: no noise needs here
  const auto krules = rules_of(rules, good_bands_.as<int>());
  HB_TRY(reserve_matrices(view.core_pixels(), 0));
  HB_TRY(ensure_mask(tile, rules));
  steps_.begin(stream_);
  HB_TRY(zero_moments(count_, sum_, cross_, krules.nb, stream_));
  if (data.shift != shift_on_device_) {  // once per pass: a pageable copy may wait for the stream
    HB_TRY(check(cudaMemcpyAsync(shift_.as<double>(), data.shift.data(), data.shift.size() * sizeof(double),
                                 cudaMemcpyHostToDevice, stream_), "copy shift"));
    shift_on_device_ = data.shift;
  }
  HB_TRY(check(km::convert_center_f64(view, krules, valid_.as<std::uint8_t>(), shift_.as<double>(),
                                      matrix_.as<double>(), {count_.as<unsigned long long>(), sum_.as<double>(),
                                      cross_.as<double>()}, workspace_.as<void>(), workspace_.bytes(), stream_),
               "convert and centre"));
  steps_.end(stream_, kConvert);
  return add_tile_moments(view.core_pixels(), data);
}

Status MnfTileOps::accumulate_noise_moments(const io::Tile& stored, const mnf::PixelRules& rules,
                                           const mnf::NoiseConfig& config, mnf::Moments& noise) {
  cudaSetDevice(device_);
  HB_TRY(upload_tile(stored));
  const TileShape tile = shape_of(stored);
  HB_TRY(upload_rules(tile, rules));
  const auto view = view_of(tile, raw_[current_].as<void>(), config.lines);
  const auto krules = rules_of(rules, good_bands_.as<int>());
  HB_TRY(reserve_matrices(view.core_pixels(), 0));
  HB_TRY(ensure_mask(tile, rules));
  steps_.begin(stream_);
  HB_TRY(zero_moments(count_, sum_, cross_, krules.nb, stream_));
  HB_TRY(check(km::noise_residuals_f64(view, krules, valid_.as<std::uint8_t>(), config.estimator,
                                       window_of(config.window), matrix_.as<double>(),
                                       {count_.as<unsigned long long>(), sum_.as<double>(), cross_.as<double>()},
                                       workspace_.as<void>(), workspace_.bytes(), stream_),
               "noise residuals"));
  steps_.end(stream_, kNoise);
  return add_tile_moments(view.core_pixels(), noise);
}

Status MnfTileOps::transform(const io::Tile& tile, const mnf::PixelRules& rules, const mnf::LinearMap& map,
                            std::span<float> out) {
  cudaSetDevice(device_);
  HB_TRY(upload_tile(tile));
  return transform_current(shape_of(tile), rules, map, out);
}

// The transform of the tile in the current slot.
Status MnfTileOps::transform_current(const TileShape& tile, const mnf::PixelRules& rules, const mnf::LinearMap& map,
                                     std::span<float> out) {
  const std::int64_t outputs = map.outputs();
  HB_TRY(upload_rules(tile, rules));
  const auto view = view_of(tile, raw_[current_].as<void>(), tile.held.end);
  const auto krules = rules_of(rules, good_bands_.as<int>());
  const std::int64_t pixels = view.core_pixels();
  if (static_cast<std::int64_t>(out.size()) != pixels * outputs || map.matrix.rows != krules.nb ||
      static_cast<int>(map.center.size()) != krules.nb ||
      (!map.offset.empty() && static_cast<std::int64_t>(map.offset.size()) != outputs))
    return Error{ErrorKind::internal, {}, {}, "transform: shapes of tile, map and output disagree"};
  HB_TRY(reserve_matrices(pixels, outputs));
  // The map (matrix, centre, offset) is uploaded when its values change: compared by
  // content, since a new map may reuse the freed memory of the last one.
  const std::size_t matrix_doubles = static_cast<std::size_t>(krules.nb) * outputs;
  std::vector<double> packed(map.matrix.data.begin(), map.matrix.data.end());
  packed.insert(packed.end(), map.center.begin(), map.center.end());
  if (map.offset.empty()) packed.resize(packed.size() + static_cast<std::size_t>(outputs), 0.0);
  else packed.insert(packed.end(), map.offset.begin(), map.offset.end());
  const auto map_bytes = map_.bytes();
  HB_TRY(check(map_.reserve(packed.size() * sizeof(double)), "map buffer"));
  if (map_.bytes() != map_bytes || packed != map_on_device_) {
    HB_TRY(check(cudaMemcpyAsync(map_.as<double>(), packed.data(), packed.size() * sizeof(double),
                                 cudaMemcpyHostToDevice, stream_), "copy map"));
    HB_TRY(check(cudaStreamSynchronize(stream_), "copy map"));
    map_on_device_ = std::move(packed);
  }
  double* d_matrix = map_.as<double>();
  double* d_center = d_matrix + matrix_doubles;
  double* d_offset = d_center + krules.nb;
  HB_TRY(ensure_mask(tile, rules));
  HB_TRY(zero_moments(count_, sum_, cross_, krules.nb, stream_));
  HB_TRY(check(km::convert_center_f64(view, krules, valid_.as<std::uint8_t>(), d_center, matrix_.as<double>(),
                                      {count_.as<unsigned long long>(), sum_.as<double>(), cross_.as<double>()},
                                      workspace_.as<void>(), workspace_.bytes(), stream_),
               "convert and centre"));
  // Row-major Z[p x m] = X[p x nb] M[nb x m] is column-major Zᵀ = Mᵀ Xᵀ.
  HB_TRY(check(product_.reserve(static_cast<std::size_t>(pixels * outputs) * (sizeof(double) + sizeof(float))),
               "product buffer"));
  double* z = product_.as<double>();
  float* z32 = reinterpret_cast<float*>(z + pixels * outputs);
  const double one = 1.0, zero = 0.0;
  HB_TRY(check(cublasSetStream(cublas_, stream_), "cuBLAS stream"));
  HB_TRY(check(cublasDgemm(cublas_, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(outputs), static_cast<int>(pixels),
                           krules.nb, &one, d_matrix, static_cast<int>(outputs), matrix_.as<double>(), krules.nb,
                           &zero, z, static_cast<int>(outputs)),
               "DGEMM"));
  const std::uint8_t* valid_core = valid_.as<std::uint8_t>() + view.core_offset();
  finish_transform<<<1024, 256, 0, stream_>>>(z, d_offset, valid_core, pixels, static_cast<int>(outputs), map.fill,
                                              z32);
  HB_TRY(check(cudaGetLastError(), "finish transform"));
  HB_TRY(check(cudaMemcpyAsync(out.data(), z32, out.size_bytes(), cudaMemcpyDeviceToHost, stream_), "copy result"));
  HB_TRY(check(cudaStreamSynchronize(stream_), "transform"));
  resident_[current_] = {};  // one call per tile: never match a later tile at a reused address
  return {};
}

Result<linalg::SymmetricEigen> MnfTileOps::symmetric_eigen(const linalg::Matrix& a) { return eigen_.solve(a); }

// Its own buffers, not the tile slots: the denoise pass widens a tile it then transforms.
Status MnfTileOps::convert_to_f32(const io::Tile& tile, std::span<float> out) {
  cudaSetDevice(device_);
  if (tile.units()) return Error{ErrorKind::internal, {}, {}, "convert_to_f32 takes samples, not stored numbers"};
  const auto in = tile.bytes();
  DeviceBuffer raw, wide;
  if (auto e = raw.reserve(in.size()); e != cudaSuccess) return failure(e, "cudaMalloc");
  if (auto e = wide.reserve(out.size_bytes()); e != cudaSuccess) return failure(e, "cudaMalloc");
  if (auto e = cudaMemcpy(raw.as<void>(), in.data(), in.size(), cudaMemcpyHostToDevice); e != cudaSuccess)
    return failure(e, "copy to device");
  const auto n = static_cast<std::size_t>(tile.pixels() * tile.bands());
  if (auto e = kernels::convert_to_f32(tile.type(), raw.as<void>(), wide.as<float>(), n, nullptr); e != cudaSuccess)
    return failure(e, "convert kernel");
  if (auto e = cudaMemcpy(out.data(), wide.as<void>(), out.size_bytes(), cudaMemcpyDeviceToHost); e != cudaSuccess)
    return failure(e, "copy to host");
  return {};
}

std::unique_ptr<mnf::TileOps> make_mnf_tile_ops(std::unique_ptr<Backend> device) {
  return std::make_unique<MnfTileOps>(std::move(device));
}

}  // namespace hb::cuda
