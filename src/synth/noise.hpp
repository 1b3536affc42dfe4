// Counter-based randomness for the synthetic scenes: every random value is a pure
// function of (seed, purpose, coordinates), so bytes never depend on the order or the
// tile size in which they are generated. No sequential generator state anywhere.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace hb::synth {

inline constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ULL;

// splitmix64's finaliser: a bijective, well-avalanched mix of 64 bits.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// What a random value is for; each purpose gets an independent stream per seed.
enum class Stream : std::uint64_t {
  cell_centre = 1,
  cell_class,
  cell_brightness,
  warp_y,
  warp_x,
  brightness,
  pixel_noise,
  stripe_gain,
  stripe_offset,
  material_variant,
  fill_geometry,
};

constexpr std::uint64_t stream_key(std::uint64_t seed, Stream stream) {
  return mix64(mix64(seed + kGolden) ^ mix64(static_cast<std::uint64_t>(stream) * 0xd1b54a32d192ed03ULL));
}

// Hash of a key and counters; signed counters (lattice cells left of 0) wrap harmlessly.
constexpr std::uint64_t hash(std::uint64_t key, std::uint64_t a) { return mix64(key ^ mix64(a + kGolden)); }
constexpr std::uint64_t hash(std::uint64_t key, std::uint64_t a, std::uint64_t b) { return hash(hash(key, a), b); }
constexpr std::uint64_t hash(std::uint64_t key, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  return hash(hash(hash(key, a), b), c);
}

// The n-th value of a splitmix64 sequence started at `key`: the cheap inner-loop draw.
constexpr std::uint64_t sequence(std::uint64_t key, std::uint64_t n) { return mix64(key + (n + 1) * kGolden); }

// Uniform in [0, 1) with 53 random bits.
constexpr double unit_interval(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1p-53; }

// Uniform in [-1, 1).
constexpr double signed_unit(std::uint64_t bits) { return 2.0 * unit_interval(bits) - 1.0; }

// Natural log for x in (0, 1], by exponent split and the atanh series: no libm call, so
// the loop vectorises and the bytes do not depend on the C library. |error| < 2e-7.
inline float log_unit(float x) {
  const auto bits = std::bit_cast<std::uint32_t>(x);
  const auto exponent = static_cast<float>(static_cast<int>((bits >> 23) & 0xFFu) - 127);
  const float m = std::bit_cast<float>((bits & 0x007FFFFFu) | 0x3F800000u);  // [1, 2)
  const float s = (m - 1.0f) / (m + 1.0f);                                   // [0, 1/3)
  const float s2 = s * s;
  const float series =
      2.0f + s2 * (2.0f / 3 + s2 * (2.0f / 5 + s2 * (2.0f / 7 + s2 * (2.0f / 9 + s2 * (2.0f / 11)))));
  return exponent * 0.693147181f + s * series;
}

struct SinCos {
  float sin;
  float cos;
};

// sin and cos of 2*pi*t for t in [-0.5, 0.5), without branches (so loops vectorise):
// with x = 2*pi*(1/4 - |t|) in [-pi/2, pi/2], cos(2*pi*t) = sin(x) and
// sin(2*pi*t) = sign(t) cos(x); both by Taylor series, |error| < 1e-6.
inline SinCos sincos_turns(float t) {
  const float x = (0.25f - std::abs(t)) * 6.28318531f;
  const float x2 = x * x;
  const float sin_x = x * (1.0f + x2 * (-1.0f / 6 + x2 * (1.0f / 120 + x2 * (-1.0f / 5040 + x2 * (1.0f / 362880 +
                                                                                             x2 * (-1.0f / 39916800))))));
  const float cos_x =
      1.0f + x2 * (-0.5f + x2 * (1.0f / 24 + x2 * (-1.0f / 720 + x2 * (1.0f / 40320 + x2 * (-1.0f / 3628800 +
                                                                                       x2 * (1.0f / 479001600))))));
  return {std::copysign(cos_x, t), sin_x};
}

struct NormalPair {
  float first;
  float second;
};

// Two independent standard normals (Box-Muller) from two 24-bit uniform integers.
inline NormalPair normal_pair(std::uint32_t radius_bits, std::uint32_t angle_bits) {
  const float u = static_cast<float>(static_cast<std::int32_t>(radius_bits) + 1) * 0x1p-24f;  // (0, 1]
  const float turn = static_cast<float>(static_cast<std::int32_t>(angle_bits)) * 0x1p-24f - 0.5f;  // [-0.5, 0.5)
  const float radius = std::sqrt(-2.0f * log_unit(u));
  const SinCos angle = sincos_turns(turn);
  return {radius * angle.cos, radius * angle.sin};
}

// The 24-bit halves of 48 random bits that normal_pair takes.
constexpr std::uint32_t radius_bits(std::uint64_t bits) { return static_cast<std::uint32_t>(bits >> 40); }
constexpr std::uint32_t angle_bits(std::uint64_t bits) { return static_cast<std::uint32_t>(bits >> 16) & 0xFFFFFFu; }

inline NormalPair normal_pair(std::uint64_t bits) { return normal_pair(radius_bits(bits), angle_bits(bits)); }

// Smooth value noise in [-1, 1] with features about `scale` pixels across: hashed
// lattice values blended with smoothstep weights.
inline double value_noise(std::uint64_t key, double y, double x, double scale) {
  const double fy = y / scale;
  const double fx = x / scale;
  const double cy = std::floor(fy);
  const double cx = std::floor(fx);
  const auto iy = static_cast<std::int64_t>(cy);
  const auto ix = static_cast<std::int64_t>(cx);
  auto lattice = [&](std::int64_t dy, std::int64_t dx) {
    return signed_unit(hash(key, static_cast<std::uint64_t>(iy + dy), static_cast<std::uint64_t>(ix + dx)));
  };
  auto smooth = [](double t) { return t * t * (3.0 - 2.0 * t); };
  const double ty = smooth(fy - cy);
  const double tx = smooth(fx - cx);
  const double top = lattice(0, 0) + tx * (lattice(0, 1) - lattice(0, 0));
  const double bottom = lattice(1, 0) + tx * (lattice(1, 1) - lattice(1, 0));
  return top + ty * (bottom - top);
}

}  // namespace hb::synth
