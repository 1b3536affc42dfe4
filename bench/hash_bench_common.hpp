// What the hash benchmarks share: timing, distinct keys (on the device and the host,
// the same sequence), the contenders' names and one aligned output table with G ops/s.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <thread>
#include <vector>

#include "kernels/hash/layout.hpp"
#include "src/hash/sharded_table.hpp"

namespace hb::bench {

#define HB_CUDA_CHECK(call)                                                                 \
  do {                                                                                      \
    const cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                                \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));      \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

// Key i of a run: a bijection of i, so keys never repeat.
inline std::uint64_t bench_key(std::uint64_t i, std::uint64_t salt) { return hash::mix(i * 0x9e3779b97f4a7c15ull + salt); }

inline std::vector<std::uint64_t> host_keys(std::size_t n, std::uint64_t salt, std::uint64_t first = 0) {
  std::vector<std::uint64_t> keys(n);
  hash::parallel_ranges(n, 0, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) keys[i] = bench_key(first + i, salt);
  });
  return keys;
}

template <class F>
double seconds_of(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Device time of a stream-ordered body.
template <class F>
double device_seconds(F&& f) {
  cudaEvent_t start, stop;
  HB_CUDA_CHECK(cudaEventCreate(&start));
  HB_CUDA_CHECK(cudaEventCreate(&stop));
  HB_CUDA_CHECK(cudaEventRecord(start));
  f();
  HB_CUDA_CHECK(cudaEventRecord(stop));
  HB_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  HB_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  HB_CUDA_CHECK(cudaGetLastError());
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / 1e3;
}

inline double median3(double a, double b, double c) { return std::max(std::min(a, b), std::min(std::max(a, b), c)); }

inline void print_header(const char* axis) {
  std::printf("%-8s %-22s %12s %14s %11s %10s  %s\n", "bench", "table", "ops", axis, "seconds", "G ops/s", "note");
}
inline void print_row(const char* bench, const char* table, double ops, const char* axis_value, double seconds,
                      const char* note = "") {
  std::printf("%-8s %-22s %12.0f %14s %11.6f %10.4f  %s\n", bench, table, ops, axis_value, seconds,
              ops / seconds / 1e9, note);
  std::fflush(stdout);
}

// "# <what> on <GPU>, <n> host threads<detail>"
inline void print_title(const char* what, const char* detail) {
  cudaDeviceProp prop{};
  HB_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("# %s on %s, %u host threads%s\n", what, prop.name, std::max(1u, std::thread::hardware_concurrency()),
              detail);
}

inline bool quick_mode(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::string_view(argv[i]) == "--quick") return true;
  return false;
}

}  // namespace hb::bench
