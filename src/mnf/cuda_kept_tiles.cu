// Tiles kept on the GPU between a scene's statistics and transform passes (TileOps::
// keep_tiles): the statistics pass's uploads are copied, as stored, into one device
// buffer, and the transform pass makes each tile's samples from it instead of reading
// the scene again. The transform then runs the same kernels on the same samples, so
// its output is the same bytes.
#include <algorithm>

#include "src/base/cuda_error.hpp"
#include "src/mnf/cuda_tile_ops.hpp"

namespace hb::cuda {
namespace {

Status check(cudaError_t e, const char* what) { return status(e, what); }

// Room left on the device for the transform's own buffers and what the process runs
// next: an eighth of the free memory, at least 4 GiB.
constexpr std::size_t kHeadroomFloor = std::size_t{4} << 30;

}  // namespace

bool MnfTileOps::keep_tiles(std::int64_t bytes) {
  cudaSetDevice(device_);
  drop_kept();
  std::size_t free = 0, total = 0;
  if (bytes <= 0 || cudaMemGetInfo(&free, &total) != cudaSuccess) return false;
  const std::size_t headroom = std::max(kHeadroomFloor, free / 8);
  if (free <= headroom || static_cast<std::size_t>(bytes) > free - headroom) return false;
  if (kept_.reserve(static_cast<std::size_t>(bytes)) != cudaSuccess) {
    cudaGetLastError();  // a refused allocation is not an error of the pass
    return false;
  }
  keeping_ = true;
  return true;
}

void MnfTileOps::drop_kept() {
  keeping_ = false;
  kept_used_ = 0;
  kept_tiles_.clear();
  kept_.release();
}

// Appends the tile just copied to `on_device` (stored numbers), on the copy stream
// behind that copy.
Status MnfTileOps::keep_copy(const io::Tile& tile, const void* on_device) {
  const std::size_t bytes = tile.bytes().size();
  if (kept_used_ + bytes > kept_.bytes())
    return Error{ErrorKind::internal, {}, {}, "kept tiles: more than the room asked for"};
  HB_TRY(check(cudaMemcpyAsync(kept_.as<std::byte>() + kept_used_, on_device, bytes, cudaMemcpyDeviceToDevice,
                               copy_stream_), "keep tile"));
  KeptTile kept{shape_of(tile), std::nullopt, kept_used_, bytes};
  if (tile.units()) kept.units = *tile.units();
  kept_tiles_.push_back(std::move(kept));
  kept_used_ += bytes;
  return {};
}

// The kept tile holding `core`, made the current slot as upload_tile would make it.
Status MnfTileOps::transform_kept(RowRange core, const mnf::PixelRules& rules, const mnf::LinearMap& map,
                                  std::span<float> out) {
  cudaSetDevice(device_);
  keeping_ = false;  // the statistics pass is over
  const auto found = std::find_if(kept_tiles_.begin(), kept_tiles_.end(), [&](const KeptTile& t) {
    return t.shape.held.begin <= core.begin && core.end <= t.shape.held.end;
  });
  if (found == kept_tiles_.end()) return Error{ErrorKind::internal, {}, {}, "transform_kept: rows were not kept"};
  TileShape shape = found->shape;
  shape.core = core;
  const int slot = 1 - current_;
  resident_[slot] = {};
  mask_ready_ = false;
  HB_TRY(check(cudaStreamWaitEvent(copy_stream_, released_[slot], 0), "wait for tile buffer"));
  const auto samples = static_cast<std::size_t>(shape.pixels() * shape.bands);
  HB_TRY(check(raw_[slot].reserve(found->units ? samples * sizeof(float) : found->bytes), "tile buffer"));
  const std::byte* stored = kept_.as<std::byte>() + found->offset;
  if (found->units)
    HB_TRY(make_physical(shape.type, shape.pixels(), shape.bands, *found->units, stored, slot));
  else
    HB_TRY(check(cudaMemcpyAsync(raw_[slot].as<void>(), stored, found->bytes, cudaMemcpyDeviceToDevice, copy_stream_),
                 "restore kept tile"));
  HB_TRY(check(cudaEventRecord(copied_[slot], copy_stream_), "record tile copy"));
  HB_TRY(check(cudaStreamWaitEvent(stream_, copied_[slot], 0), "order kernels after the copy"));
  current_ = slot;
  return transform_current(shape, rules, map, out);
}

}  // namespace hb::cuda
