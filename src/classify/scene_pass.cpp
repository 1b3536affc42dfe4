#include "src/classify/scene_pass.hpp"

#include <algorithm>
#include <functional>

#include "io/tile_reader.hpp"
#include "src/base/parallel_for.hpp"

namespace hb::classify {
namespace {

constexpr std::int64_t kPackPixels = 8192;  // pixels per packing piece

}  // namespace

FeatureTiles::FeatureTiles(const io::Cube& scene, const BandSelection& selection, std::vector<RowRange> tiles,
                           bool validity_only)
    : scene_(scene), selection_(selection), tiles_(std::move(tiles)), validity_only_(validity_only),
      reader_(std::make_unique<io::TileReader>(scene, tiles_, 0)) {}

FeatureTiles::~FeatureTiles() = default;

Result<FeatureTile*> FeatureTiles::next() {
  auto tile = reader_->next();
  if (!tile) return tile.error();
  if (*tile == nullptr) return static_cast<FeatureTile*>(nullptr);
  const RowRange rows = tiles_[next_++];
  const auto& shape = scene_.info().shape;
  const std::int64_t pixels = rows.rows() * shape.samples;
  valid_.resize(static_cast<std::size_t>(pixels));
  const auto ignore = scene_.info().meta.data_ignore_value;
  if (validity_only_) {
    extract_validity(**tile, selection_, ignore, valid_.data());
    current_ = {rows, rows.begin * shape.samples, pixels, {}, valid_};
    return &current_;
  }
  features_.resize(static_cast<std::size_t>(pixels * selection_.dims()));
  extract_features(**tile, 0, pixels, selection_, ignore, features_.data(), valid_.data());
  current_ = {rows, rows.begin * shape.samples, pixels, features_, valid_};
  return &current_;
}

std::vector<RowRange> row_tiles(RowRange span, std::int64_t tile_rows) {
  const std::int64_t step = std::max<std::int64_t>(tile_rows, 1);
  std::vector<RowRange> tiles;
  for (std::int64_t r0 = span.begin; r0 < span.end; r0 += step) tiles.push_back({r0, std::min(span.end, r0 + step)});
  return tiles;
}

Status for_each_feature_tile(const io::Cube& scene, const BandSelection& selection, std::int64_t tile_rows,
                             const FeatureTileFn& fn, std::optional<RowRange> range) {
  FeatureTiles tiles(scene, selection, row_tiles(range.value_or(RowRange{0, scene.info().shape.lines}), tile_rows));
  for (;;) {
    auto tile = tiles.next();
    if (!tile) return tile.error();
    if (*tile == nullptr) return {};
    HB_TRY(fn(**tile));
  }
}

std::int64_t pack_valid_pixels(const FeatureTile& tile, std::int64_t dims, std::span<const double> shift,
                               float* queries, std::vector<std::int64_t>& pixel) {
  const std::int64_t pieces = (tile.pixels + kPackPixels - 1) / kPackPixels;
  std::vector<std::int64_t> first(static_cast<std::size_t>(pieces) + 1, 0);
  parallel_for(pieces, 1, [&](std::int64_t begin, std::int64_t end) {
    for (auto piece = begin; piece < end; ++piece) {
      const auto from = tile.valid.begin() + piece * kPackPixels;
      const auto to = tile.valid.begin() + std::min(tile.pixels, (piece + 1) * kPackPixels);
      first[static_cast<std::size_t>(piece) + 1] = std::count(from, to, std::uint8_t{1});
    }
  });
  for (std::size_t i = 1; i < first.size(); ++i) first[i] += first[i - 1];
  pixel.resize(static_cast<std::size_t>(first.back()));
  parallel_for(pieces, 1, [&](std::int64_t begin, std::int64_t end) {
    for (auto piece = begin; piece < end; ++piece) {
      std::int64_t q = first[static_cast<std::size_t>(piece)];
      for (std::int64_t p = piece * kPackPixels; p < std::min(tile.pixels, (piece + 1) * kPackPixels); ++p) {
        if (!tile.valid[static_cast<std::size_t>(p)]) continue;
        pixel[static_cast<std::size_t>(q)] = p;
        const float* in = tile.features.data() + p * dims;
        float* out = queries + q * dims;
        if (shift.empty()) std::copy_n(in, dims, out);
        else
          for (std::int64_t f = 0; f < dims; ++f)
            out[f] = static_cast<float>(static_cast<double>(in[f]) - shift[static_cast<std::size_t>(f)]);
        ++q;
      }
    }
  });
  return first.back();
}

Status for_each_validity_tile(const io::Cube& scene, const BandSelection& selection, std::vector<RowRange> tiles,
                              const ValidityFn& fn) {
  FeatureTiles pass(scene, selection, std::move(tiles), true);
  for (;;) {
    auto tile = pass.next();
    if (!tile) return tile.error();
    if (*tile == nullptr) return {};
    fn((*tile)->valid);
  }
}

Result<std::vector<std::uint8_t>> validity_mask(const io::Cube& scene, const BandSelection& selection,
                                                std::int64_t tile_rows, std::optional<RowRange> rows) {
  const auto span = rows.value_or(RowRange{0, scene.info().shape.lines});
  std::vector<std::uint8_t> mask;
  mask.reserve(static_cast<std::size_t>(span.rows() * scene.info().shape.samples));
  HB_TRY(for_each_validity_tile(scene, selection, row_tiles(span, tile_rows), [&](std::span<const std::uint8_t> valid) {
    mask.insert(mask.end(), valid.begin(), valid.end());
  }));
  return mask;
}

namespace {

// Tiles over the rows of the wanted pixels (ascending). A tile starts at a wanted row and
// takes the next wanted rows within tile_rows, across gaps of at most max_gap rows:
// rows far from every wanted pixel are not read.
std::vector<RowRange> wanted_tiles(std::span<const std::int64_t> pixels, std::int64_t samples,
                                       std::int64_t tile_rows, std::int64_t max_gap) {
  const std::int64_t step = std::max<std::int64_t>(tile_rows, 1);
  std::vector<RowRange> tiles;
  for (std::size_t i = 0; i < pixels.size();) {
    const std::int64_t r0 = pixels[i] / samples;
    std::int64_t last = r0;
    for (; i < pixels.size(); ++i) {
      const std::int64_t row = pixels[i] / samples;
      if (row >= r0 + step || row > last + max_gap) break;
      last = row;
    }
    tiles.push_back({r0, last + 1});
  }
  return tiles;
}

// fn(tile, i, tile-local pixel) for each wanted pixel i, in order.
using WantedPixelFn = std::function<void(const io::Tile&, std::size_t, std::int64_t)>;

Status for_each_wanted_pixel(const io::Cube& scene, std::span<const std::int64_t> pixels, std::int64_t tile_rows,
                             const WantedPixelFn& fn) {
  const auto samples = scene.info().shape.samples;
  // A gap of a few rows is read through; a compressed chunk would be decoded again for
  // every separate read, so compressed scenes read through any gap.
  const std::int64_t max_gap = scene.compressed() ? tile_rows : 4;
  const auto tiles = wanted_tiles(pixels, samples, tile_rows, max_gap);
  io::TileReader reader(scene, tiles, 0);
  std::size_t next = 0;
  for (const auto& rows : tiles) {
    auto tile = reader.next();
    if (!tile) return tile.error();
    for (; next < pixels.size() && pixels[next] < rows.end * samples; ++next)
      fn(**tile, next, pixels[next] - rows.begin * samples);
  }
  return {};
}

}  // namespace

Result<std::vector<float>> gather_features(const io::Cube& scene, const BandSelection& selection,
                                           std::span<const std::int64_t> pixels, std::int64_t tile_rows) {
  const std::int64_t dims = selection.dims();
  const auto ignore = scene.info().meta.data_ignore_value;
  std::vector<float> out(pixels.size() * static_cast<std::size_t>(dims));
  std::uint8_t valid = 0;
  HB_TRY(for_each_wanted_pixel(scene, pixels, tile_rows, [&](const io::Tile& tile, std::size_t i, std::int64_t p) {
    extract_features(tile, p, 1, selection, ignore, out.data() + static_cast<std::ptrdiff_t>(i) * dims, &valid);
  }));
  return out;
}

Result<std::vector<std::uint8_t>> pixel_validity(const io::Cube& scene, const BandSelection& selection,
                                                 std::span<const std::int64_t> pixels, std::int64_t tile_rows) {
  const auto ignore = scene.info().meta.data_ignore_value;
  std::vector<std::uint8_t> valid(pixels.size());
  std::vector<float> features(static_cast<std::size_t>(selection.dims()));
  HB_TRY(for_each_wanted_pixel(scene, pixels, tile_rows, [&](const io::Tile& tile, std::size_t i, std::int64_t p) {
    extract_features(tile, p, 1, selection, ignore, features.data(), &valid[i]);
  }));
  return valid;
}

}  // namespace hb::classify
