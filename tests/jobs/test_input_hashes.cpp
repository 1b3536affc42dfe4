// The input hash against its definition (jobs/input_hashes.hpp), computed here one byte
// at a time: a file of two pieces whose length is no multiple of 8 or of the hash's read
// size, so neither the piece boundary, the read size nor the tail bytes may move it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "io/file_image.hpp"
#include "jobs/input_hashes.hpp"
#include "tests/io/host_image_sink.hpp"
#include "tests/support/scratch_dir.hpp"

namespace {

constexpr std::uint64_t kOffset = 14695981039346656037ull;
constexpr std::uint64_t kPrime = 1099511628211ull;
constexpr std::size_t kPiece = std::size_t{64} << 20;

std::uint64_t fnv_piece(const std::vector<unsigned char>& bytes, std::size_t begin, std::size_t end) {
  std::uint64_t h = kOffset;
  std::size_t i = begin;
  for (; i + 8 <= end; i += 8) {
    std::uint64_t word = 0;
    for (int b = 7; b >= 0; --b) word = (word << 8) | bytes[i + static_cast<std::size_t>(b)];  // little-endian
    h = (h ^ word) * kPrime;
  }
  for (; i < end; ++i) h = (h ^ bytes[i]) * kPrime;
  return h;
}

std::string reference_hash(const std::vector<unsigned char>& bytes) {
  std::uint64_t h = kOffset;
  for (std::size_t begin = 0; begin < bytes.size(); begin += kPiece)
    h = (h ^ fnv_piece(bytes, begin, std::min(bytes.size(), begin + kPiece))) * kPrime;
  h = (h ^ bytes.size()) * kPrime;
  return fmt::format("{:016x}", h);
}

TEST(InputHashes, MatchTheDefinitionAcrossPiecesAndTail) {
  const hb::test::ScratchDir dir("hb_input_hash");
  const auto path = dir.file("scene.img");
  std::vector<unsigned char> bytes(kPiece + (std::size_t{300} << 10) + 3);
  std::mt19937_64 random(7);
  for (auto& b : bytes) b = static_cast<unsigned char>(random());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
  const auto hash = hb::jobs::file_content_hash(path);
  ASSERT_TRUE(hash.has_value());
  EXPECT_EQ(*hash, reference_hash(bytes));
}

// Hashed from a load ahead's own reads (jobs::load_and_hash): the same hash, the file
// in memory byte for byte, and the hash asked afterwards taken from the load.
TEST(InputHashes, LoadedAheadHashTheSame) {
  const hb::test::ScratchDir dir("hb_input_hash_load");
  const auto path = dir.file("scene.img");
  std::vector<unsigned char> bytes(kPiece + (std::size_t{300} << 10) + 3);
  std::mt19937_64 random(11);
  for (auto& b : bytes) b = static_cast<unsigned char>(random());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(hb::jobs::load_and_hash(path, hb::io::test::host_image_sink()).get().ok());
  const auto image = hb::io::file_image(path);
  ASSERT_NE(image, nullptr);
  ASSERT_EQ(image->size, static_cast<std::int64_t>(bytes.size()));
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), reinterpret_cast<const unsigned char*>(image->bytes.get())));
  const auto hash = hb::jobs::file_content_hash(path);
  ASSERT_TRUE(hash.has_value());
  EXPECT_EQ(*hash, reference_hash(bytes));
  hb::io::drop_file_image(path);
  EXPECT_EQ(hb::io::file_image(path), nullptr);
}

TEST(InputHashes, UnreadableFileHasNone) {
  EXPECT_FALSE(hb::jobs::file_content_hash("/nonexistent/hb_input_hash.img").has_value());
}

}  // namespace
