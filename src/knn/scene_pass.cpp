#include "src/knn/scene_pass.hpp"

#include <algorithm>

namespace hb::knn {

Status for_each_feature_tile(const io::Cube& scene, const BandSelection& selection, std::int64_t tile_rows,
                             Backend& backend, const FeatureTileFn& fn, std::optional<io::RowRange> range) {
  const auto& shape = scene.info().shape;
  const io::RowRange span = range.value_or(io::RowRange{0, shape.lines});
  const std::int64_t rows_per_tile = std::clamp<std::int64_t>(tile_rows, 1, std::max<std::int64_t>(shape.lines, 1));
  std::vector<float> samples;
  std::vector<float> features;
  std::vector<std::uint8_t> valid;
  for (std::int64_t r0 = span.begin; r0 < span.end; r0 += rows_per_tile) {
    const io::RowRange rows{r0, std::min(span.end, r0 + rows_per_tile)};
    auto tile = scene.read_tile(rows);
    if (!tile) return tile.error();
    const std::int64_t pixels = rows.rows() * shape.samples;
    samples.resize(static_cast<std::size_t>(pixels * shape.bands));
    HB_TRY(backend.convert_to_f32(*tile, samples));
    features.resize(static_cast<std::size_t>(pixels * selection.dims()));
    valid.resize(static_cast<std::size_t>(pixels));
    extract_features(samples.data(), pixels, selection, scene.info().meta.data_ignore_value, features.data(),
                     valid.data());
    FeatureTile view{rows, r0 * shape.samples, pixels, features, valid};
    HB_TRY(fn(view));
  }
  return {};
}

Result<std::vector<std::uint8_t>> validity_mask(const io::Cube& scene, const BandSelection& selection,
                                                std::int64_t tile_rows, Backend& backend,
                                                std::optional<io::RowRange> rows) {
  std::vector<std::uint8_t> mask;
  mask.reserve(static_cast<std::size_t>(scene.info().shape.pixels()));
  const Status status = for_each_feature_tile(scene, selection, tile_rows, backend, [&](FeatureTile& t) -> Status {
    mask.insert(mask.end(), t.valid.begin(), t.valid.end());
    return {};
  }, rows);
  if (!status) return status.error();
  return mask;
}

Result<std::vector<float>> gather_features(const io::Cube& scene, const BandSelection& selection,
                                           std::span<const std::int64_t> pixels, std::int64_t tile_rows,
                                           Backend& backend) {
  const std::int64_t dims = selection.dims();
  std::vector<float> out(pixels.size() * static_cast<std::size_t>(dims));
  std::size_t next = 0;
  if (pixels.empty()) return out;
  const auto samples = scene.info().shape.samples;
  const io::RowRange rows{pixels.front() / samples, pixels.back() / samples + 1};
  const Status status = for_each_feature_tile(scene, selection, tile_rows, backend, [&](FeatureTile& t) -> Status {
    for (; next < pixels.size() && pixels[next] < t.first_pixel + t.pixels; ++next) {
      const std::int64_t local = pixels[next] - t.first_pixel;
      std::copy_n(t.features.begin() + local * dims, dims, out.begin() + static_cast<std::ptrdiff_t>(next) * dims);
    }
    return {};
  }, rows);
  if (!status) return status.error();
  return out;
}

}  // namespace hb::knn
