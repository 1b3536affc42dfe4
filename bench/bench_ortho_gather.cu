// The ortho gather kernel (kernels/ortho) on one GPU: grid pixels per second and
// bytes moved per second against a device-to-device copy of the same bytes (the HBM
// floor), for a few pixel sizes, each checked against a host gather of the same GLT.
// Self-contained (only kernels/ortho): `nvcc -std=c++20 -O2 -arch=sm_90 -I. bench/bench_ortho_gather.cu kernels/ortho/gather.cu`.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/ortho/gather.cuh"

namespace {

#define CHECK(x)                                                                       \
  do {                                                                                 \
    if (cudaError_t e_ = (x); e_ != cudaSuccess) {                                     \
      std::fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                    \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

float time_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  return ms;
}

int run(std::int64_t pixel_bytes, std::int64_t source_pixels, std::int64_t grid_pixels) {
  std::mt19937 rng(static_cast<unsigned>(pixel_bytes));
  const std::int64_t samples = 1242;
  std::vector<std::byte> source(static_cast<std::size_t>(source_pixels * pixel_bytes));
  for (std::size_t i = 0; i < source.size(); i += 7) source[i] = static_cast<std::byte>(rng());
  std::vector<std::int32_t> s(static_cast<std::size_t>(grid_pixels)), l(s.size());
  const std::int64_t lines = source_pixels / samples;
  for (std::size_t p = 0; p < s.size(); ++p) {
    const bool none = rng() % 3 == 0;
    s[p] = none ? -1 : static_cast<std::int32_t>(rng() % samples);
    l[p] = none ? -1 : static_cast<std::int32_t>(rng() % lines);
  }
  std::vector<std::byte> fill(static_cast<std::size_t>(pixel_bytes), std::byte{0x7f});
  std::byte *d_source, *d_fill, *d_out, *d_copy;
  std::int32_t *d_s, *d_l;
  const std::size_t out_bytes = static_cast<std::size_t>(grid_pixels * pixel_bytes);
  CHECK(cudaMalloc(&d_source, source.size()));
  CHECK(cudaMalloc(&d_fill, fill.size()));
  CHECK(cudaMalloc(&d_out, out_bytes));
  CHECK(cudaMalloc(&d_copy, out_bytes));
  CHECK(cudaMalloc(&d_s, s.size() * 4));
  CHECK(cudaMalloc(&d_l, l.size() * 4));
  CHECK(cudaMemcpy(d_source, source.data(), source.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_fill, fill.data(), fill.size(), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_s, s.data(), s.size() * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_l, l.data(), l.size() * 4, cudaMemcpyHostToDevice));
  const hb::kernels::ortho::GatherArgs args{d_source, 0, samples, d_s, d_l, d_fill, d_out, grid_pixels, pixel_bytes};
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  CHECK(hb::kernels::ortho::launch_gather(args, nullptr));
  cudaEventRecord(a);
  constexpr int kRepeats = 10;
  for (int r = 0; r < kRepeats; ++r) CHECK(hb::kernels::ortho::launch_gather(args, nullptr));
  cudaEventRecord(b);
  CHECK(cudaEventSynchronize(b));
  const double gather_s = time_ms(a, b) / 1e3 / kRepeats;
  cudaEventRecord(a);
  for (int r = 0; r < kRepeats; ++r) CHECK(cudaMemcpyAsync(d_copy, d_out, out_bytes, cudaMemcpyDeviceToDevice));
  cudaEventRecord(b);
  CHECK(cudaEventSynchronize(b));
  const double copy_s = time_ms(a, b) / 1e3 / kRepeats;

  std::vector<std::byte> got(out_bytes), want(out_bytes);
  CHECK(cudaMemcpy(got.data(), d_out, out_bytes, cudaMemcpyDeviceToHost));
  for (std::size_t p = 0; p < s.size(); ++p) {
    const std::byte* from = s[p] < 0 ? fill.data() : source.data() + (l[p] * samples + s[p]) * pixel_bytes;
    std::memcpy(want.data() + p * pixel_bytes, from, static_cast<std::size_t>(pixel_bytes));
  }
  const bool same = got == want;
  std::printf("pixel %5lld B  grid %9lld px  gather %8.3f ms  %7.1f GB/s written  %6.2f Gpx/s  | D2D copy floor %7.1f GB/s  | %s\n",
              static_cast<long long>(pixel_bytes), static_cast<long long>(grid_pixels), gather_s * 1e3,
              static_cast<double>(out_bytes) / gather_s / 1e9, static_cast<double>(grid_pixels) / gather_s / 1e9,
              2.0 * static_cast<double>(out_bytes) / copy_s / 1e9, same ? "matches the host gather" : "MISMATCH");
  cudaFree(d_source), cudaFree(d_fill), cudaFree(d_out), cudaFree(d_copy), cudaFree(d_s), cudaFree(d_l);
  return same ? 0 : 1;
}

}  // namespace

int main() {
  int failed = 0;
  // EMIT-like: 1280 x 1242 scene; 285 bands float32 (1140 B), class maps (2 B), MNF (80 B).
  for (std::int64_t pixel_bytes : {1, 2, 3, 80, 1140}) {
    const std::int64_t source_pixels = 1280 * 1242;
    const std::int64_t grid_pixels = pixel_bytes > 100 ? 1800 * 1400 : 4 * 1800 * 1400;
    failed |= run(pixel_bytes, source_pixels, grid_pixels);
  }
  return failed;
}
