#include "src/synth/layout.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "src/synth/noise.hpp"

namespace hb::synth {
namespace {

// Warped points stay within one cell of the scene and their nearest centre within one
// more: two cells of margin on every side.
constexpr std::int64_t kMargin = 2;

double smoothstep(double edge0, double edge1, double x) {
  const double t = std::clamp((x - edge0) / (edge1 - edge0), 0.0, 1.0);
  return t * t * (3.0 - 2.0 * t);
}

}  // namespace

Layout::Layout(std::int64_t lines, std::int64_t samples, int classes, std::uint64_t seed, double fill_fraction,
               LayoutParams params)
    : strip_(lines, samples, fill_fraction, seed), params_(params) {
  // About four cells per class, between 6 and 64 pixels across: fields, not speckle.
  const double area = static_cast<double>(lines) * static_cast<double>(samples);
  cell_px_ = std::clamp(std::sqrt(area / (4.0 * classes)), 6.0, 64.0);
  warp_px_ = 0.25 * cell_px_;
  cell_rows_ = static_cast<std::int64_t>(std::ceil(static_cast<double>(lines) / cell_px_));
  cell_cols_ = static_cast<std::int64_t>(std::ceil(static_cast<double>(samples) / cell_px_));
  centre_key_ = stream_key(seed, Stream::cell_centre);
  cell_brightness_key_ = stream_key(seed, Stream::cell_brightness);
  warp_y_key_ = stream_key(seed, Stream::warp_y);
  warp_x_key_ = stream_key(seed, Stream::warp_x);
  brightness_key_ = stream_key(seed, Stream::brightness);
  assign_classes(classes, seed);
}

// Interior cells, in row-major order, take classes in blocks of `classes` that are each a
// seeded permutation of all classes: every class appears as soon as the scene has that
// many cells. Margin cells (only seen at the scene edge) take hashed classes.
void Layout::assign_classes(int classes, std::uint64_t seed) {
  const std::uint64_t key = stream_key(seed, Stream::cell_class);
  const std::int64_t stride = cell_cols_ + 2 * kMargin;
  cell_material_.assign(static_cast<std::size_t>((cell_rows_ + 2 * kMargin) * stride), 0);
  for (std::int64_t r = 0; r < cell_rows_ + 2 * kMargin; ++r)
    for (std::int64_t c = 0; c < stride; ++c)
      cell_material_[static_cast<std::size_t>(r * stride + c)] =
          static_cast<std::uint8_t>(hash(key, static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(c)) %
                                    static_cast<std::uint64_t>(classes));
  std::vector<std::uint8_t> permutation(static_cast<std::size_t>(classes));
  const std::int64_t interior = cell_rows_ * cell_cols_;
  for (std::int64_t i = 0; i < interior; ++i) {
    const auto position = static_cast<std::size_t>(i % classes);
    if (position == 0) {
      const auto block = static_cast<std::uint64_t>(i / classes);
      std::iota(permutation.begin(), permutation.end(), std::uint8_t{0});
      for (std::size_t j = permutation.size(); j > 1; --j)  // Fisher-Yates
        std::swap(permutation[j - 1], permutation[hash(key, ~block, j) % j]);
    }
    const std::int64_t r = i / cell_cols_ + kMargin;
    const std::int64_t c = i % cell_cols_ + kMargin;
    cell_material_[static_cast<std::size_t>(r * stride + c)] = permutation[position];
  }
}

Layout::Candidate Layout::candidate(std::int64_t cell_row, std::int64_t cell_col, double y, double x) const {
  const std::int64_t r = std::clamp<std::int64_t>(cell_row + kMargin, 0, cell_rows_ + 2 * kMargin - 1);
  const std::int64_t c = std::clamp<std::int64_t>(cell_col + kMargin, 0, cell_cols_ + 2 * kMargin - 1);
  const std::int64_t cell = r * (cell_cols_ + 2 * kMargin) + c;
  const std::uint64_t bits = hash(centre_key_, static_cast<std::uint64_t>(cell_row), static_cast<std::uint64_t>(cell_col));
  // Jittered centre, kept off the cell edges so that neighbouring cells stay apart.
  const double cy = (static_cast<double>(cell_row) + 0.15 + 0.7 * static_cast<double>(bits >> 40) * 0x1p-24) * cell_px_;
  const double cx =
      (static_cast<double>(cell_col) + 0.15 + 0.7 * static_cast<double>((bits >> 16) & 0xFFFFFFu) * 0x1p-24) * cell_px_;
  const double dy = y - cy;
  const double dx = x - cx;
  return {cy, cx, dy * dy + dx * dx, cell_material_[static_cast<std::size_t>(cell)], cell};
}

PixelCover Layout::at(std::int64_t line, std::int64_t sample) const {
  PixelCover cover;
  if (!strip_.contains(line, sample)) {
    cover.fill = true;
    return cover;
  }
  const double y0 = static_cast<double>(line) + 0.5;
  const double x0 = static_cast<double>(sample) + 0.5;
  // Two octaves of warp turn straight Voronoi edges into wandering field borders. Its
  // gradient stays below 1/2, so the warp never folds and distances stay near pixels.
  auto warp = [&](std::uint64_t key) {
    return warp_px_ * (value_noise(key, y0, x0, 2.0 * cell_px_) + 0.5 * value_noise(key + 1, y0, x0, cell_px_)) / 1.5;
  };
  const double y = y0 + warp(warp_y_key_);
  const double x = x0 + warp(warp_x_key_);
  const auto row = static_cast<std::int64_t>(std::floor(y / cell_px_));
  const auto col = static_cast<std::int64_t>(std::floor(x / cell_px_));

  Candidate near[9];
  int nearest = 0;
  for (int i = 0; i < 9; ++i) {
    near[i] = candidate(row + i / 3 - 1, col + i % 3 - 1, y, x);
    if (near[i].distance2 < near[nearest].distance2) nearest = i;
  }
  const Candidate& own = near[nearest];
  // Distance to the nearest region of another material. A cell's region is the
  // intersection of the half-planes nearer to it than to each other centre, so its
  // distance is the largest distance to those half-planes: exact along its edges.
  double border = 1e300;
  for (const Candidate& other : near) {
    if (other.material == own.material) continue;
    double distance = 0.0;
    for (const Candidate& rival : near) {
      if (&rival == &other) continue;
      const double dy = other.y - rival.y;
      const double dx = other.x - rival.x;
      const double separation = std::sqrt(dy * dy + dx * dx);
      distance = std::max(distance, (other.distance2 - rival.distance2) / (2.0 * separation));
    }
    if (distance < border) {
      border = distance;
      cover.secondary = other.material;
    }
  }
  cover.primary = own.material;
  if (params_.border_mixing_px > 0.0 && border < params_.border_mixing_px)
    cover.secondary_weight = static_cast<float>(0.5 * (1.0 - smoothstep(0.0, params_.border_mixing_px, border)));
  if (cover.secondary_weight == 0.0f) cover.secondary = cover.primary;
  const double field = 0.05 * value_noise(brightness_key_, y0, x0, 18.0) +
                       0.03 * signed_unit(hash(cell_brightness_key_, static_cast<std::uint64_t>(own.cell)));
  cover.brightness = static_cast<float>(1.0 + params_.variability * field);
  return cover;
}

}  // namespace hb::synth
