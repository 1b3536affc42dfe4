// Helpers shared by the KNN tests: an in-memory scene and a float64 brute-force k-NN.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "io/cube.hpp"

namespace hb::knn::test {

// A scene held in memory in the canonical layout (BIP), for driving the scene code
// without files.
class MemoryCube final : public io::Cube {
 public:
  MemoryCube(io::CubeInfo info, std::vector<std::byte> bip) : info_(std::move(info)), bytes_(std::move(bip)) {}
  const io::CubeInfo& info() const override { return info_; }
  const std::string& path() const override { return path_; }
  io::CubeFormat format() const override { return io::CubeFormat::envi; }
  std::int64_t bytes_on_disk() const override { return static_cast<std::int64_t>(bytes_.size()); }
  Status read_rows(RowRange rows, std::span<std::byte> out) const override {
    const auto row_bytes = static_cast<std::size_t>(info_.bytes_per_row());
    std::memcpy(out.data(), bytes_.data() + static_cast<std::size_t>(rows.begin) * row_bytes,
                static_cast<std::size_t>(rows.rows()) * row_bytes);
    return {};
  }

 private:
  io::CubeInfo info_;
  std::vector<std::byte> bytes_;
  std::string path_ = "memory.hdr";
};

template <class T>
std::vector<std::byte> to_bytes(const std::vector<T>& values) {
  std::vector<std::byte> out(values.size() * sizeof(T));
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// The reference: for each query, every training row ranked by (float64 distance, index).
struct Ranked {
  std::vector<double> distance;     // [k]
  std::vector<std::int64_t> index;  // [k]
};

inline double squared_distance64(const float* a, const float* b, std::int64_t dims) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < dims; ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    sum += d * d;
  }
  return sum;
}

inline double cosine_distance64(const float* a, const float* b, std::int64_t dims) {
  double dot = 0.0, na = 0.0, nb = 0.0;
  for (std::int64_t i = 0; i < dims; ++i) {
    dot += static_cast<double>(a[i]) * b[i];
    na += static_cast<double>(a[i]) * a[i];
    nb += static_cast<double>(b[i]) * b[i];
  }
  if (na == 0.0 || nb == 0.0) return 1.0;
  return std::clamp(1.0 - dot / (std::sqrt(na) * std::sqrt(nb)), 0.0, 2.0);
}

// The k lexicographically smallest (distance, index) pairs of one query.
template <class Distance>
Ranked brute_force(const float* query, const std::vector<float>& train, std::int64_t dims, int k, Distance distance) {
  const auto n = static_cast<std::int64_t>(train.size()) / dims;
  std::vector<std::pair<double, std::int64_t>> all(static_cast<std::size_t>(n));
  for (std::int64_t t = 0; t < n; ++t) all[static_cast<std::size_t>(t)] = {distance(query, train.data() + t * dims, dims), t};
  std::partial_sort(all.begin(), all.begin() + k, all.end());
  Ranked r;
  for (int j = 0; j < k; ++j) {
    r.distance.push_back(all[static_cast<std::size_t>(j)].first);
    r.index.push_back(all[static_cast<std::size_t>(j)].second);
  }
  return r;
}

// Uniform random integers in [0, max_value]: small enough that FP32 GEMM distances are
// exact, so results must equal the reference bit for bit, ties included.
inline std::vector<float> random_integers(std::int64_t rows, std::int64_t dims, int max_value, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(0, max_value);
  std::vector<float> out(static_cast<std::size_t>(rows * dims));
  for (auto& x : out) x = static_cast<float>(value(rng));
  return out;
}

// Radiance-like values: a large common offset plus variation, where the GEMM expansion
// without centring would lose most of its digits.
inline std::vector<float> random_radiances(std::int64_t rows, std::int64_t dims, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> value(0.0f, 40.0f);
  std::vector<float> out(static_cast<std::size_t>(rows * dims));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = 3000.0f + static_cast<float>(i % static_cast<std::size_t>(dims)) * 10.0f + value(rng);
  return out;
}

}  // namespace hb::knn::test
