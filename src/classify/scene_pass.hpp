// Streaming passes over a scene in row tiles, handing each tile's features (bad bands
// dropped, ignored pixels flagged) to the caller. The classifiers' passes (validity, gather
// of training pixels, class means, classification) all go through here. The next tile is read while
// the caller works on the current one (ENVI scenes; see io::TileReader), and feature
// extraction (widening included) uses the host's threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "io/cube.hpp"
#include "src/classify/features.hpp"

namespace hb::io {
class TileReader;
}

namespace hb::classify {

struct FeatureTile {
  RowRange rows;
  std::int64_t first_pixel = 0;   // scene pixel index of the tile's first pixel
  std::int64_t pixels = 0;
  std::span<float> features;      // [pixels, dims]; zeros where invalid
  std::span<const std::uint8_t> valid;
};

// The feature tiles of a list of row ranges, in order, one read ahead. With
// validity_only the tiles carry their validity flags and no features.
class FeatureTiles {
 public:
  FeatureTiles(const io::Cube& scene, const BandSelection& selection, std::vector<RowRange> tiles,
               bool validity_only = false);
  ~FeatureTiles();
  FeatureTiles(const FeatureTiles&) = delete;
  FeatureTiles& operator=(const FeatureTiles&) = delete;

  // The next tile (valid until the following call), or nullptr after the last one.
  Result<FeatureTile*> next();

 private:
  const io::Cube& scene_;
  const BandSelection& selection_;
  std::vector<RowRange> tiles_;
  bool validity_only_;
  std::size_t next_ = 0;
  std::unique_ptr<io::TileReader> reader_;
  std::vector<float> features_;
  std::vector<std::uint8_t> valid_;
  FeatureTile current_;
};

// Rows [span.begin, span.end) cut into tiles of at most tile_rows rows.
std::vector<RowRange> row_tiles(RowRange span, std::int64_t tile_rows);

using FeatureTileFn = std::function<Status(FeatureTile&)>;

// `rows` limits the pass to part of the scene (a rank's block); default: every row.
Status for_each_feature_tile(const io::Cube& scene, const BandSelection& selection, std::int64_t tile_rows,
                             const FeatureTileFn& fn, std::optional<RowRange> rows = {});

// The valid pixels of a tile packed into query rows, [count, dims], each feature minus
// shift[f] (in double, rounded once: the same rounding the training rows get); `pixel`
// receives each query's tile-local pixel. An empty shift leaves the features as they
// are. `queries` has room for every pixel of the tile; returns the count.
std::int64_t pack_valid_pixels(const FeatureTile& tile, std::int64_t dims, std::span<const double> shift,
                               float* queries, std::vector<std::int64_t>& pixel);

using ValidityFn = std::function<void(std::span<const std::uint8_t>)>;

// fn(the validity flags of the tile's pixels) for each of the given row tiles, in order.
Status for_each_validity_tile(const io::Cube& scene, const BandSelection& selection, std::vector<RowRange> tiles,
                              const ValidityFn& fn);

// The validity flag of every scene pixel.
Result<std::vector<std::uint8_t>> validity_mask(const io::Cube& scene, const BandSelection& selection,
                                                std::int64_t tile_rows, std::optional<RowRange> rows = {});

// Features of the given scene pixels (ascending), [pixels.size(), dims]; tiles start
// at a wanted pixel's row, so rows far from every wanted pixel are not read.
Result<std::vector<float>> gather_features(const io::Cube& scene, const BandSelection& selection,
                                           std::span<const std::int64_t> pixels, std::int64_t tile_rows);

// The validity flag of the given scene pixels (ascending), read as gather_features reads.
Result<std::vector<std::uint8_t>> pixel_validity(const io::Cube& scene, const BandSelection& selection,
                                                 std::span<const std::int64_t> pixels, std::int64_t tile_rows);

}  // namespace hb::classify
