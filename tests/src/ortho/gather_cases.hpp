// Random gather tiles shared by the CPU and CUDA gather tests: source rows, GLT entries
// with no-data, and the expected grid pixels computed by the obvious loop; and the
// product cubes the run tests write.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "io/cube.hpp"
#include "src/ortho/gather.hpp"

namespace hb::ortho::test {

struct GatherCase {
  std::vector<std::byte> source;
  io::GltRows glt;
  std::vector<std::byte> fill;
  std::vector<std::byte> expected;
  GatherTile tile;
};

// pixel_bytes of 1..N: odd sizes take the byte path of the CUDA kernel, multiples of 4 the word path.
inline GatherCase make_gather_case(std::int64_t pixel_bytes, std::int64_t pixels, std::uint32_t seed) {
  GatherCase c;
  std::mt19937 rng(seed);
  const RowRange rows{5, 12};
  const std::int64_t samples = 13;
  c.source.resize(static_cast<std::size_t>(rows.rows() * samples * pixel_bytes));
  for (auto& b : c.source) b = static_cast<std::byte>(rng());
  c.fill.assign(static_cast<std::size_t>(pixel_bytes), std::byte{0xA5});
  const std::int64_t first = 3;  // the tile starts inside the GLT rows
  c.glt.sample.assign(static_cast<std::size_t>(first + pixels), -1);
  c.glt.line.assign(static_cast<std::size_t>(first + pixels), -1);
  c.expected.resize(static_cast<std::size_t>(pixels * pixel_bytes));
  for (std::int64_t p = 0; p < pixels; ++p) {
    const auto at = static_cast<std::size_t>(first + p);
    std::byte* out = c.expected.data() + p * pixel_bytes;
    if (rng() % 4 == 0) {
      std::memcpy(out, c.fill.data(), static_cast<std::size_t>(pixel_bytes));
      continue;
    }
    c.glt.sample[at] = static_cast<std::int32_t>(rng() % samples);
    c.glt.line[at] = static_cast<std::int32_t>(rows.begin + rng() % rows.rows());
    const std::int64_t from = (c.glt.line[at] - rows.begin) * samples + c.glt.sample[at];
    std::memcpy(out, c.source.data() + from * pixel_bytes, static_cast<std::size_t>(pixel_bytes));
  }
  c.tile = GatherTile{c.source, rows, samples, pixel_bytes, &c.glt, first, pixels, c.fill};
  return c;
}

// A cube of `values` written to `path` (ENVI or HDF5 by name).
template <class T>
void write_cube(const std::string& path, io::CubeInfo info, const std::vector<T>& values) {
  auto writer = io::create_cube(path, info);
  ASSERT_TRUE(writer.ok());
  ASSERT_TRUE((*writer)->write_rows({0, info.shape.lines}, std::as_bytes(std::span(values))).ok());
  ASSERT_TRUE((*writer)->commit().ok());
}

}  // namespace hb::ortho::test
