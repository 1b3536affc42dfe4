#include "kernels/valid_pixels.cuh"

#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <type_traits>

namespace hb::kernels {
namespace {

// Narrow types: the ignore value, compared as stored.
struct EqualTo {
  template <class T>
  __device__ bool operator()(T v) const {
    return v == static_cast<T>(target);
  }
  std::int64_t target;
};

// The host's unusable_sample: the ignore value, NaN or an infinity.
struct IgnoredOrNotFinite {
  __device__ bool operator()(float v) const { return v == ignored || !isfinite(v); }
  float ignored;
};

// A warp a pixel: the lanes read its used bands side by side (coalesced) and vote.
template <class T, class Unusable>
__global__ void flag_valid(const T* __restrict__ tile, std::int64_t pixels, std::int64_t scene_bands,
                           const std::int64_t* __restrict__ band, int dims, Unusable unusable,
                           std::uint8_t* __restrict__ flag) {
  const int lane = static_cast<int>(threadIdx.x % 32);
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / 32);
  for (std::int64_t p = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32; p < pixels; p += warps) {
    const T* in = tile + p * scene_bands;
    bool out = false;
    for (int f = lane; f < dims; f += 32) out |= unusable(in[band[f]]);
    out = __any_sync(0xffffffffu, out);
    if (lane == 0) flag[p] = out ? 0 : 1;
  }
}

std::size_t select_bytes(std::int64_t pixels, const std::uint8_t* flag = nullptr, std::int64_t* out = nullptr,
                         std::int64_t* count = nullptr) {
  std::size_t bytes = 0;
  cub::DeviceSelect::Flagged(nullptr, bytes, thrust::counting_iterator<std::int64_t>(0), flag, out, count, pixels);
  return bytes;
}

}  // namespace

std::size_t valid_pixel_scratch_bytes(std::int64_t pixels) { return std::max<std::size_t>(select_bytes(pixels), 1); }

cudaError_t list_valid_pixels(DataType type, const void* tile, std::int64_t pixels, std::int64_t scene_bands,
                              const std::int64_t* band, int dims, const UnusableSample& unusable, std::uint8_t* flag,
                              void* scratch, std::size_t scratch_bytes, std::int64_t* out, std::int64_t* count,
                              cudaStream_t stream) {
  const bool narrow = type == DataType::u8 || type == DataType::i16 || type == DataType::u16;
  if (!narrow && type != DataType::f32) return cudaErrorInvalidValue;
  if (pixels == 0) return cudaMemsetAsync(count, 0, sizeof(std::int64_t), stream);
  if (narrow && !unusable.target) {
    if (const auto e = cudaMemsetAsync(flag, 1, static_cast<std::size_t>(pixels), stream); e != cudaSuccess) return e;
  } else {
    constexpr int kThreads = 256;
    const auto blocks = static_cast<unsigned>(std::min<std::int64_t>((pixels + kThreads / 32 - 1) / (kThreads / 32), 65535 * 8));
    visit_data_type(type, [&](auto zero) {
      using T = decltype(zero);
      const auto* samples = static_cast<const T*>(tile);
      if constexpr (std::is_same_v<T, float>)
        flag_valid<<<blocks, kThreads, 0, stream>>>(samples, pixels, scene_bands, band, dims,
                                                    IgnoredOrNotFinite{unusable.ignored}, flag);
      else if constexpr (std::is_integral_v<T> && sizeof(T) <= 2)
        flag_valid<<<blocks, kThreads, 0, stream>>>(samples, pixels, scene_bands, band, dims, EqualTo{*unusable.target},
                                                    flag);
    });
    if (const auto e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cub::DeviceSelect::Flagged(scratch, scratch_bytes, thrust::counting_iterator<std::int64_t>(0), flag, out,
                                    count, pixels, stream);
}

}  // namespace hb::kernels
