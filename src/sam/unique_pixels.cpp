#include "src/sam/unique_pixels.hpp"

#include <cstring>
#include <vector>

namespace hb::sam {
namespace {

std::size_t pixel_bytes(const io::Tile& tile) {
  return static_cast<std::size_t>(tile.bands()) * static_cast<std::size_t>(bytes_per_sample(tile.type()));
}

const std::byte* core_pixel(const io::Tile& tile, std::int64_t p) {
  const auto first = static_cast<std::size_t>((tile.core().begin - tile.held().begin) * tile.samples());
  return tile.bytes().data() + (first + static_cast<std::size_t>(p)) * pixel_bytes(tile);
}

}  // namespace

Result<dedup::Duplicates> find_duplicate_pixels(const io::Tile& tile, BackendKind backend) {
  // Each pixel's bytes as whole 32-bit words (zero padded): the dedup module compares
  // and fingerprints rows bit for bit, whatever the sample type.
  const std::size_t bytes = pixel_bytes(tile);
  const std::size_t words = (bytes + 3) / 4;
  const std::int64_t pixels = tile.core().rows() * tile.samples();
  std::vector<float> rows(static_cast<std::size_t>(pixels) * words, 0.0f);
  for (std::int64_t p = 0; p < pixels; ++p)
    std::memcpy(rows.data() + static_cast<std::size_t>(p) * words, core_pixel(tile, p), bytes);
  return dedup::find_duplicates(rows, static_cast<std::int64_t>(words), backend);
}

io::Tile unique_pixel_tile(const io::Tile& tile, const dedup::Duplicates& d) {
  io::Tile out(tile.type(), d.uniques(), tile.bands(), {0, 1}, {0, 1});
  const std::size_t bytes = pixel_bytes(tile);
  for (std::int64_t u = 0; u < d.uniques(); ++u)
    std::memcpy(out.bytes().data() + static_cast<std::size_t>(u) * bytes,
                core_pixel(tile, d.unique_rows[static_cast<std::size_t>(u)]), bytes);
  return out;
}

void scatter_scores(const TileScores& unique, const dedup::Duplicates& d, std::int64_t references, TileScores& out) {
  const auto pixels = static_cast<std::size_t>(d.rows());
  const auto per_pixel = static_cast<std::size_t>(references);
  out.best.resize(pixels);
  out.best_score.resize(pixels);
  out.scores.resize(unique.scores.empty() ? 0 : pixels * per_pixel);
  for (std::size_t p = 0; p < pixels; ++p) {
    const auto u = static_cast<std::size_t>(d.inverse[p]);
    out.best[p] = unique.best[u];
    out.best_score[p] = unique.best_score[u];
    if (!unique.scores.empty())
      std::copy_n(unique.scores.begin() + static_cast<std::ptrdiff_t>(u * per_pixel), per_pixel,
                  out.scores.begin() + static_cast<std::ptrdiff_t>(p * per_pixel));
  }
}

}  // namespace hb::sam
