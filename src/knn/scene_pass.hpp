// One streaming pass over a scene in row tiles, handing each tile's features (bad bands
// dropped, ignored pixels flagged) to a callback. The passes of `knn` (validity, gather
// of training pixels, classification) all go through here.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "io/cube.hpp"
#include "src/backend/backend.hpp"
#include "src/knn/features.hpp"

namespace hb::knn {

struct FeatureTile {
  io::RowRange rows;
  std::int64_t first_pixel = 0;   // scene pixel index of the tile's first pixel
  std::int64_t pixels = 0;
  std::span<float> features;      // [pixels, dims]; zeros where invalid
  std::span<const std::uint8_t> valid;
};

using FeatureTileFn = std::function<Status(FeatureTile&)>;

// `rows` limits the pass to part of the scene (a rank's block); default: every row.
Status for_each_feature_tile(const io::Cube& scene, const BandSelection& selection, std::int64_t tile_rows,
                             Backend& backend, const FeatureTileFn& fn, std::optional<io::RowRange> rows = {});

// The validity flag of every scene pixel.
Result<std::vector<std::uint8_t>> validity_mask(const io::Cube& scene, const BandSelection& selection,
                                                std::int64_t tile_rows, Backend& backend,
                                                std::optional<io::RowRange> rows = {});

// Features of the given scene pixels (ascending), [pixels.size(), dims]; only the rows
// from the first pixel's to the last one's are read.
Result<std::vector<float>> gather_features(const io::Cube& scene, const BandSelection& selection,
                                           std::span<const std::int64_t> pixels, std::int64_t tile_rows,
                                           Backend& backend);

}  // namespace hb::knn
