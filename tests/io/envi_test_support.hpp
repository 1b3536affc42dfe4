// Shared by the ENVI tests: a scratch directory, file writers, and cube contents
// that differ in every byte so that a wrong offset, transpose or byte swap shows.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "src/base/data_type.hpp"
#include "src/base/error.hpp"
#include "io/metadata.hpp"
#include "tests/support/scratch_dir.hpp"

namespace hb::io::test {

// A scratch directory per test (tests/support/scratch_dir.hpp).
struct TempDir : hb::test::ScratchDir {
  TempDir() : ScratchDir("hb_envi") {}
};

inline void write_file(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A distinct value per (line, sample, band), using every byte of the type.
template <class T>
T sample_value(std::int64_t line, std::int64_t sample, std::int64_t band) {
  const auto key = static_cast<std::uint64_t>((line * 131 + sample) * 257 + band + 1);
  const std::uint64_t mixed = key * 0x9E3779B97F4A7C15ull;
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(static_cast<double>(mixed >> 40) / 7.0 - 1e5);
  } else {
    return static_cast<T>(mixed >> (64 - 8 * sizeof(T)));
  }
}

// The canonical (BIP, native byte order) bytes of rows [r0, r1).
inline std::vector<std::byte> canonical_rows(const CubeInfo& info, std::int64_t r0, std::int64_t r1) {
  std::vector<std::byte> out(static_cast<std::size_t>((r1 - r0) * info.bytes_per_row()));
  visit_data_type(info.type, [&](auto zero) {
    using T = decltype(zero);
    std::size_t i = 0;
    for (std::int64_t l = r0; l < r1; ++l)
      for (std::int64_t s = 0; s < info.shape.samples; ++s)
        for (std::int64_t b = 0; b < info.shape.bands; ++b, i += sizeof(T)) {
          const T v = sample_value<T>(l, s, b);
          std::memcpy(out.data() + i, &v, sizeof(T));
        }
  });
  return out;
}

// A minimal valid header followed by `more` lines.
inline std::string header_text(std::int64_t lines, std::int64_t samples, std::int64_t bands, int type,
                               const std::string& more = {}) {
  return "ENVI\nsamples = " + std::to_string(samples) + "\nlines = " + std::to_string(lines) +
         "\nbands = " + std::to_string(bands) + "\ndata type = " + std::to_string(type) + "\n" + more;
}

// The error names the file and the field, in the struct and in the printed line.
inline void expect_error(const Error& error, ErrorKind kind, const std::string& file, const std::string& field) {
  EXPECT_EQ(error.kind, kind) << error.line();
  EXPECT_EQ(error.file, file) << error.line();
  EXPECT_EQ(error.field, field) << error.line();
  EXPECT_NE(error.line().find(file), std::string::npos) << error.line();
  if (!field.empty()) {
    EXPECT_NE(error.line().find("'" + field + "'"), std::string::npos) << error.line();
  }
  EXPECT_EQ(error.line().find('\n'), std::string::npos) << "one line: " << error.line();
}

}  // namespace hb::io::test
