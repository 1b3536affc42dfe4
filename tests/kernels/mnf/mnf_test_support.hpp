// Test support for the MNF device kernels: RAII device buffers, synthetic scenes with
// excluded pixels, tiles cut from them with halos, and float64 CPU references written
// from the conventions in kernels/mnf/README.md (independently of the kernels).
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "src/base/data_type.hpp"
#include "kernels/mnf/noise_estimators.hpp"
#include "kernels/mnf/types.cuh"

namespace hb::kernels::mnf::test {

bool have_device();

#define HB_REQUIRE_DEVICE() \
  if (!::hb::kernels::mnf::test::have_device()) GTEST_SKIP() << "no CUDA device"

#define HB_CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess)
#define HB_LAUNCH_OK(expr)                      \
  do {                                          \
    const auto hb_status_ = (expr);             \
    ASSERT_TRUE(hb_status_.ok()) << hb_status_.message(); \
  } while (0)

// A device allocation of n elements of T, freed on scope exit.
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n = 0) : n_(n) {
    if (n_ > 0 && cudaMalloc(&p_, n_ * sizeof(T)) != cudaSuccess) p_ = nullptr;
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() { cudaFree(p_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* get() const { return static_cast<T*>(p_); }
  std::size_t size() const { return n_; }
  void upload(const std::vector<T>& host) { cudaMemcpy(p_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice); }
  void zero() { cudaMemset(p_, 0, n_ * sizeof(T)); }
  std::vector<T> download() const {
    std::vector<T> host(n_);
    cudaMemcpy(host.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost);
    return host;
  }

 private:
  void* p_ = nullptr;
  std::size_t n_ = 0;
};

// A whole scene of raw samples (lines x samples x bands, BIP) and its pixel rules.
struct Scene {
  DataType type = DataType::i16;
  std::int64_t lines = 0, samples = 0, bands = 0;
  std::vector<std::byte> raw;
  std::vector<int> good;  // good band indices
  std::optional<double> ignore;

  int nb() const { return static_cast<int>(good.size()); }
  double at(std::int64_t row, std::int64_t col, std::int64_t band) const;
};

// Random samples around a per-band level, with ~3% of pixels excluded (ignore value in
// one good band, or NaN for float types), a NaN or ignore value in a bad band of some
// valid pixels (must not exclude them), and every second band among the first few bad.
Scene make_scene(DataType type, std::int64_t lines, std::int64_t samples, std::int64_t bands, int good_bands,
                 unsigned seed);

// The scene's rows [core_begin, core_end) plus up to `halo` rows each side, uploaded.
struct DeviceTile {
  TileView view;
  DeviceBuffer<std::byte> bytes;
  DeviceBuffer<int> good;
  PixelRules rules;
  DeviceTile(const Scene& scene, std::int64_t core_begin, std::int64_t core_end, int halo);
};

// Device moments (count, sum, full cross buffer), zeroed, and their host copies.
struct DeviceStats {
  DeviceBuffer<unsigned long long> count;
  DeviceBuffer<double> sum, cross;
  explicit DeviceStats(int nb)
      : count(1), sum(static_cast<std::size_t>(nb)), cross(static_cast<std::size_t>(nb) * static_cast<std::size_t>(nb)) {
    count.zero();
    sum.zero();
    cross.zero();
  }
  DeviceMoments moments() const { return {count.get(), sum.get(), cross.get()}; }
};

// --- float64 references -------------------------------------------------------------
bool ref_valid(const Scene& s, std::int64_t row, std::int64_t col);

// Accumulated in long double; *_scale is Σ|term| of each entry, the yardstick for
// "equal to 1e-12 relative" when an entry is a sum that cancels.
struct RefMoments {
  std::uint64_t count = 0;
  std::vector<double> sum, sum_scale;      // [nb]
  std::vector<double> cross, cross_scale;  // [nb x nb], full
};

// Rows of the data matrix x - shift (zero rows for excluded pixels) for scene rows [r0, r1).
std::vector<double> ref_centered(const Scene& s, std::int64_t r0, std::int64_t r1, const std::vector<double>& shift);
// Residual rows owned by scene rows [r0, r1) (zero rows where none), and their count.
std::vector<double> ref_residuals(const Scene& s, NoiseEstimator e, std::int64_t r0, std::int64_t r1,
                                  const NoiseWindow& window, std::uint64_t& count);
// Moments of the rows of M [rows x nb] (zero rows add nothing); `count` is passed through.
RefMoments ref_moments(const std::vector<double>& M, int nb, std::uint64_t count);

// |a[i] - b[i]| <= tol * scale[i] for every i (upper triangle only when `upper_of` > 0,
// the matrices being [upper_of x upper_of]).
void expect_close(const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& scale,
                  double tol, const char* what, int upper_of = 0);

}  // namespace hb::kernels::mnf::test
