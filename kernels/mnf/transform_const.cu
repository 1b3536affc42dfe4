// The MNF paper's (Zhou, Gao and Fang 2017) MNF-C transform (its "v3"): the transform
// matrix in constant memory, a block of pixels staged through shared memory, one thread
// per pixel.
#include <algorithm>

#include "kernels/mnf/transform.cuh"

namespace hb::kernels::mnf {
namespace {

constexpr int kPixels = 128;  // threads per block, one pixel each
constexpr int kChunk = 32;    // bands staged per step
constexpr int kConstWords = 16384;  // 64 KB of 4-byte words

// Layout (in 4-byte words): mean as FP64 [nb_pad] | offset as FP64 [m_pad] | T as FP32
// [m_pad / group][nb_pad][group], zero-padded: a block's component group is contiguous,
// so in the inner loop every load is one base register plus a compile-time offset.
// Addressed by index through the symbol itself so that the compiler keeps every access
// in the constant space (uniform across a warp: one broadcast per load).
__constant__ unsigned c_store[kConstWords];

struct ConstLayout {
  int nb_pad = 0, m_pad = 0, group = 0;  // group: components per block (8, 16 or 32)
  int offset_word = 0, t_word = 0, words = 0;
};

ConstLayout const_layout(int nb, int m) {
  ConstLayout l;
  l.group = m <= 8 ? 8 : m <= 16 ? 16 : 32;
  l.nb_pad = (nb + kChunk - 1) / kChunk * kChunk;
  l.m_pad = (m + l.group - 1) / l.group * l.group;
  l.offset_word = 2 * l.nb_pad;
  l.t_word = l.offset_word + 2 * l.m_pad;
  l.words = l.t_word + l.nb_pad * l.m_pad;
  return l;
}

__device__ __forceinline__ double const_double(int word) {
  return __hiloint2double(static_cast<int>(c_store[word + 1]), static_cast<int>(c_store[word]));
}

template <class T, int kGroup>
__global__ void __launch_bounds__(kPixels)
    transform_pixels(const T* __restrict__ raw, const std::uint8_t* __restrict__ valid, const int* __restrict__ good,
                     std::int64_t bands, std::int64_t core_offset, std::int64_t rows, int nb, int m, ConstLayout l,
                     float fill, float* __restrict__ Z) {
  // Row stride kChunk + 1 words: thread t reads s_x[t][kc], bank (t + kc) % 32, so the
  // 32 lanes hit 32 banks (a stride of 32 would put them all in one bank).
  __shared__ float s_x[kPixels][kChunk + 1];
  __shared__ double s_mean[kChunk];
  __shared__ int s_good[kChunk];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const std::int64_t p0 = std::int64_t{blockIdx.x} * kPixels;
  const int j0 = blockIdx.y * kGroup;
  float acc[kGroup] = {};
  for (int k0 = 0; k0 < nb; k0 += kChunk) {
    __syncthreads();  // the previous chunk is consumed
    if (warp == 0) {
      const int k = k0 + lane;
      s_good[lane] = k < nb ? good[k] : 0;
      s_mean[lane] = const_double(2 * min(k, nb - 1));
    }
    __syncthreads();
    // Stage: each warp takes one pixel at a time, lanes its consecutive bands (coalesced).
#pragma unroll 8
    for (int i = 0; i < kPixels / 4; ++i) {
      const int pl = warp + 4 * i;
      const std::int64_t p = p0 + pl;
      float v = 0.0f;
      if (p < rows && k0 + lane < nb && valid[p])
        v = static_cast<float>(static_cast<double>(raw[(core_offset + p) * bands + s_good[lane]]) - s_mean[lane]);
      s_x[pl][lane] = v;
    }
    __syncthreads();
    const int row0 = l.t_word + (static_cast<int>(blockIdx.y) * l.nb_pad + k0) * kGroup;
#pragma unroll
    for (int kc = 0; kc < kChunk; ++kc) {
      const float x = s_x[threadIdx.x][kc];
#pragma unroll
      for (int jj = 0; jj < kGroup; ++jj) acc[jj] = fmaf(x, __uint_as_float(c_store[row0 + kc * kGroup + jj]), acc[jj]);
    }
  }
  const std::int64_t p = p0 + threadIdx.x;
  if (p >= rows) return;
  const bool ok = valid[p] != 0;
#pragma unroll
  for (int jj = 0; jj < kGroup; ++jj) {
    const int j = j0 + jj;
    if (j < m)
      Z[p * m + j] =
          ok ? static_cast<float>(static_cast<double>(acc[jj]) + const_double(l.offset_word + 2 * j)) : fill;
  }
}

template <int kGroup>
void launch_group(const TileView& tile, const PixelRules& rules, const std::uint8_t* valid, int m,
                  const ConstLayout& l, float* Z, float fill, cudaStream_t stream) {
  const std::int64_t rows = tile.core_pixels();
  const dim3 grid(static_cast<unsigned>((rows + kPixels - 1) / kPixels), static_cast<unsigned>(l.m_pad / kGroup));
  visit_data_type(tile.type, [&](auto zero) {
    using T = decltype(zero);
    transform_pixels<T, kGroup><<<grid, kPixels, 0, stream>>>(static_cast<const T*>(tile.data), valid,
                                                              rules.good_bands, tile.bands, tile.core_offset(), rows,
                                                              rules.nb, m, l, fill, Z);
  });
}

}  // namespace

bool transform_const_fits(int nb, int m) {
  return nb > 0 && m > 0 && const_layout(nb, m).words <= kConstWords;
}

LaunchStatus transform_const_upload(const float* T, const double* mean, const double* offset, int nb, int m,
                                    cudaStream_t stream) {
  if (!transform_const_fits(nb, m)) return LaunchStatus::invalid("transform too large for constant memory");
  if (!T || !mean) return LaunchStatus::invalid("transform T / mean");
  const ConstLayout l = const_layout(nb, m);
  void* base = nullptr;
  if (auto e = cudaGetSymbolAddress(&base, c_store); e != cudaSuccess) return LaunchStatus::from(e);
  auto* words = static_cast<unsigned*>(base);
  cudaError_t e = cudaMemsetAsync(words, 0, sizeof(unsigned) * static_cast<std::size_t>(l.words), stream);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(words, mean, sizeof(double) * static_cast<std::size_t>(nb), cudaMemcpyDeviceToDevice, stream);
  if (e == cudaSuccess && offset)
    e = cudaMemcpyAsync(words + l.offset_word, offset, sizeof(double) * static_cast<std::size_t>(m),
                        cudaMemcpyDeviceToDevice, stream);
  // Group g holds components [g * group, g * group + group) of every band, contiguous.
  for (int j0 = 0; e == cudaSuccess && j0 < m; j0 += l.group) {
    const auto width = static_cast<std::size_t>(std::min(l.group, m - j0));
    e = cudaMemcpy2DAsync(words + l.t_word + (j0 / l.group) * l.nb_pad * l.group,
                          sizeof(float) * static_cast<std::size_t>(l.group), T + j0,
                          sizeof(float) * static_cast<std::size_t>(m), sizeof(float) * width,
                          static_cast<std::size_t>(nb), cudaMemcpyDeviceToDevice, stream);
  }
  return LaunchStatus::from(e);
}

LaunchStatus transform_const(const TileView& tile, const PixelRules& rules, const std::uint8_t* valid_held, int m,
                             float* Z, float fill, cudaStream_t stream) {
  if (!transform_const_fits(rules.nb, m)) return LaunchStatus::invalid("transform too large for constant memory");
  if (!rules.good_bands || rules.nb > tile.bands) return LaunchStatus::invalid("good bands");
  if (tile.core_pixels() <= 0) return {};
  if (!tile.data || !valid_held || !Z) return LaunchStatus::invalid("transform pointers");
  const ConstLayout l = const_layout(rules.nb, m);
  const std::uint8_t* valid = valid_held + tile.core_offset();
  if (l.group == 8)
    launch_group<8>(tile, rules, valid, m, l, Z, fill, stream);
  else if (l.group == 16)
    launch_group<16>(tile, rules, valid, m, l, Z, fill, stream);
  else
    launch_group<32>(tile, rules, valid, m, l, Z, fill, stream);
  return LaunchStatus::from(cudaGetLastError());
}

}  // namespace hb::kernels::mnf
