// Test helpers for MNF/PCA: scenes as float64 arrays, tiles cut from them in any data
// type, and float64 two-pass reference statistics.
#pragma once

#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <cstdint>
#include <random>
#include <vector>

#include "io/cube.hpp"
#include "io/tile.hpp"
#include "src/linalg/matrix.hpp"
#include "src/mnf/stats.hpp"

namespace hb::mnf {

// The registered estimators the tests check against their own direct definitions.
inline constexpr NoiseEstimator kDiff = kernels::mnf::estimator_id<kernels::mnf::DiffNoise>();
inline constexpr NoiseEstimator kMean3x3 = kernels::mnf::estimator_id<kernels::mnf::Mean3x3Noise>();
inline constexpr NoiseEstimator kMedian3x3 = kernels::mnf::estimator_id<kernels::mnf::Median3x3Noise>();

}  // namespace hb::mnf

namespace hb::mnf::testing {

struct Scene {
  std::int64_t lines = 0, samples = 0, bands = 0;
  std::vector<double> values;  // BIP: [lines x samples x bands]

  Scene(std::int64_t l, std::int64_t s, std::int64_t b)
      : lines(l), samples(s), bands(b), values(static_cast<std::size_t>(l * s * b), 0.0) {}
  double& at(std::int64_t r, std::int64_t c, std::int64_t b) {
    return values[static_cast<std::size_t>((r * samples + c) * bands + b)];
  }
  double at(std::int64_t r, std::int64_t c, std::int64_t b) const {
    return values[static_cast<std::size_t>((r * samples + c) * bands + b)];
  }
  std::vector<double> pixel(std::int64_t r, std::int64_t c) const {
    auto first = values.begin() + (r * samples + c) * bands;
    return {first, first + bands};
  }
};

// offset + per-band spatial structure + N(0, sd²) noise: large mean, small variance.
inline Scene random_scene(std::int64_t lines, std::int64_t samples, std::int64_t bands, std::uint64_t seed,
                          double offset = 1e4, double sd = 1.0) {
  Scene scene(lines, samples, bands);
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, sd);
  for (std::int64_t r = 0; r < lines; ++r)
    for (std::int64_t c = 0; c < samples; ++c)
      for (std::int64_t b = 0; b < bands; ++b)
        scene.at(r, c, b) = offset + 3.0 * std::sin(0.3 * static_cast<double>(r) + 0.2 * static_cast<double>(b)) +
                            2.0 * std::cos(0.25 * static_cast<double>(c * (b + 1))) + normal(rng);
  return scene;
}

// A tile of `core` rows plus `above`/`below` halo rows (clipped), values cast to T.
template <class T>
io::Tile make_tile(const Scene& scene, RowRange core, std::int64_t above = 0, std::int64_t below = 0) {
  const RowRange held{std::max<std::int64_t>(0, core.begin - above), std::min(scene.lines, core.end + below)};
  DataType type = DataType::f64;
  if constexpr (std::is_same_v<T, float>) type = DataType::f32;
  if constexpr (std::is_same_v<T, std::int16_t>) type = DataType::i16;
  if constexpr (std::is_same_v<T, std::uint16_t>) type = DataType::u16;
  io::Tile tile(type, scene.samples, scene.bands, held, core);
  auto out = tile.as<T>();
  const auto first = static_cast<std::size_t>(held.begin * scene.samples * scene.bands);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<T>(scene.values[first + i]);
  return tile;
}

// Two-pass float64 mean and (n-1)-normalised covariance of a list of vectors.
inline MeanCovariance reference_stats(const std::vector<std::vector<double>>& vectors, double scale = 1.0) {
  const auto n = static_cast<std::int64_t>(vectors.front().size());
  MeanCovariance out{static_cast<std::int64_t>(vectors.size()), std::vector<double>(static_cast<std::size_t>(n)),
                     linalg::Matrix(n, n)};
  for (const auto& v : vectors)
    for (std::int64_t i = 0; i < n; ++i) out.mean[static_cast<std::size_t>(i)] += v[static_cast<std::size_t>(i)];
  for (auto& m : out.mean) m /= static_cast<double>(vectors.size());
  for (const auto& v : vectors)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        out.covariance(i, j) += (v[static_cast<std::size_t>(i)] - out.mean[static_cast<std::size_t>(i)]) *
                                (v[static_cast<std::size_t>(j)] - out.mean[static_cast<std::size_t>(j)]);
  for (auto& x : out.covariance.data) x *= scale / static_cast<double>(vectors.size() - 1);
  return out;
}

inline double max_abs(const linalg::Matrix& m) {
  double worst = 0.0;
  for (double x : m.data) worst = std::max(worst, std::abs(x));
  return worst;
}

// Largest elementwise difference relative to the largest entry of `reference`.
inline double relative_difference(const linalg::Matrix& got, const linalg::Matrix& reference) {
  return linalg::max_abs_difference(got, reference) / max_abs(reference);
}

inline PixelRules all_bands(std::int64_t bands) {
  PixelRules rules;
  for (std::int64_t b = 0; b < bands; ++b) rules.bands.push_back(b);
  return rules;
}

// A scene held in memory, stored as T, read through the io::Cube interface.
template <class T>
class MemoryCube final : public io::Cube {
 public:
  explicit MemoryCube(const Scene& scene, io::Metadata meta = {}) : values_(scene.values.begin(), scene.values.end()) {
    info_.shape = {scene.lines, scene.samples, scene.bands};
    info_.type = std::is_same_v<T, float> ? DataType::f32
                 : std::is_same_v<T, std::int16_t> ? DataType::i16
                                                   : DataType::f64;
    info_.meta = std::move(meta);
  }
  const io::CubeInfo& info() const override { return info_; }
  const std::string& path() const override { return path_; }
  io::CubeFormat format() const override { return io::CubeFormat::hdf5; }
  std::int64_t bytes_on_disk() const override { return info_.total_bytes(); }
  Status read_rows(RowRange rows, std::span<std::byte> out) const override {
    const auto first = static_cast<std::size_t>(rows.begin * info_.bytes_per_row());
    if (out.size() != static_cast<std::size_t>(rows.rows() * info_.bytes_per_row()))
      return Error{ErrorKind::internal, path_, {}, "read size"};
    const auto* bytes = reinterpret_cast<const std::byte*>(values_.data());
    std::copy(bytes + first, bytes + first + out.size(), out.begin());
    return {};
  }

 private:
  io::CubeInfo info_;
  std::string path_ = "memory";
  std::vector<T> values_;
};

// Collects float32 rows written through the io::CubeWriter interface.
class MemoryWriter final : public io::CubeWriter {
 public:
  MemoryWriter(std::int64_t lines, std::int64_t samples, std::int64_t bands) {
    info_.shape = {lines, samples, bands};
    info_.type = DataType::f32;
    values.assign(static_cast<std::size_t>(lines * samples * bands), -12345.0f);
  }
  const io::CubeInfo& info() const override { return info_; }
  Status write_rows(RowRange rows, std::span<const std::byte> data) override {
    const auto per_row = static_cast<std::size_t>(info_.shape.samples * info_.shape.bands);
    if (data.size() != rows.rows() * per_row * sizeof(float)) return Error{ErrorKind::internal, {}, {}, "write size"};
    std::memcpy(values.data() + static_cast<std::size_t>(rows.begin) * per_row, data.data(), data.size());
    return {};
  }
  Status commit() override {
    committed = true;
    return {};
  }
  float at(std::int64_t r, std::int64_t c, std::int64_t b) const {
    return values[static_cast<std::size_t>((r * info_.shape.samples + c) * info_.shape.bands + b)];
  }

  std::vector<float> values;
  bool committed = false;

 private:
  io::CubeInfo info_;
};

}  // namespace hb::mnf::testing
