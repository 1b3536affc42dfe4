#include "jobs/quicklook.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <span>

#include "io/cube.hpp"
#include "io/glt/map_grid.hpp"

namespace hb::jobs {
namespace {

constexpr std::int64_t kRowsPerRead = 256;
constexpr std::size_t kPercentileSamples = 1 << 20;  // percentiles from at most this many values

// Bands [0, bands) of every pixel as doubles, band-major: out[b][pixel].
Result<std::vector<std::vector<double>>> read_bands(const io::Cube& cube, std::int64_t bands) {
  const auto& info = cube.info();
  const std::int64_t pixels = info.shape.pixels();
  std::vector<std::vector<double>> out(static_cast<std::size_t>(bands), std::vector<double>(static_cast<std::size_t>(pixels)));
  std::vector<std::byte> raw;
  for (std::int64_t r0 = 0; r0 < info.shape.lines; r0 += kRowsPerRead) {
    const RowRange rows{r0, std::min(info.shape.lines, r0 + kRowsPerRead)};
    raw.resize(static_cast<std::size_t>(rows.rows() * info.bytes_per_row()));
    HB_TRY(cube.read_rows(rows, raw));
    visit_data_type(info.type, [&](auto zero) {
      using T = decltype(zero);
      const T* values = reinterpret_cast<const T*>(raw.data());
      const std::int64_t first = r0 * info.shape.samples;
      for (std::int64_t p = 0; p < rows.rows() * info.shape.samples; ++p)
        for (std::int64_t b = 0; b < bands; ++b)
          out[static_cast<std::size_t>(b)][static_cast<std::size_t>(first + p)] =
              static_cast<double>(values[p * info.shape.bands + b]);
    });
  }
  return out;
}

// The low and high percentiles of the finite values (an even subsample of large bands).
std::pair<double, double> percentiles(const std::vector<double>& values, double low, double high) {
  const std::size_t step = std::max<std::size_t>(1, values.size() / kPercentileSamples);
  std::vector<double> finite;
  for (std::size_t i = 0; i < values.size(); i += step)
    if (std::isfinite(values[i])) finite.push_back(values[i]);
  if (finite.empty()) return {0.0, 1.0};
  auto at = [&](double percent) {
    const auto k = static_cast<std::size_t>(std::llround(percent / 100.0 * static_cast<double>(finite.size() - 1)));
    std::nth_element(finite.begin(), finite.begin() + static_cast<std::ptrdiff_t>(k), finite.end());
    return finite[k];
  };
  return {at(low), at(high)};
}

std::uint8_t stretch(double v, double lo, double hi) {
  if (!std::isfinite(v)) return 0;
  const double t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
  return static_cast<std::uint8_t>(std::lround(255.0 * std::clamp(t, 0.0, 1.0)));
}

// Colours for classes without an ENVI lookup: distinct, fixed.
std::array<std::uint8_t, 3> palette(int id) {
  static const std::uint8_t colours[][3] = {{0, 0, 0},       {230, 25, 75},  {60, 180, 75},   {255, 225, 25},
                                            {0, 130, 200},   {245, 130, 48}, {145, 30, 180},  {70, 240, 240},
                                            {240, 50, 230},  {210, 245, 60}, {250, 190, 212}, {0, 128, 128},
                                            {220, 190, 255}, {170, 110, 40}, {128, 0, 0},     {170, 255, 195}};
  const auto* c = colours[static_cast<std::size_t>(id) % std::size(colours)];
  return {c[0], c[1], c[2]};
}

struct ClassStyle {
  std::array<std::uint8_t, 3> colour;
  std::string name;
};

ClassStyle style_of(const io::Metadata& meta, int id) {
  ClassStyle s{palette(id), id == 0 ? "unclassified" : fmt::format("class {}", id)};
  const auto i = static_cast<std::size_t>(id);
  if (meta.class_lookup.size() >= 3 * (i + 1))
    for (std::size_t c = 0; c < 3; ++c) s.colour[c] = static_cast<std::uint8_t>(meta.class_lookup[3 * i + c]);
  if (i < meta.class_names.size()) s.name = meta.class_names[i];
  return s;
}

// The first `width` columns of `image` as a 3-band uint8 GeoTIFF on the grid of `product`
// (nothing when the product is not on a map).
Status write_geotiff_quicklook(const RgbImage& image, std::int64_t width, std::int64_t height,
                               const io::Metadata& product, const std::string& png) {
  io::CubeInfo info{{height, width, 3}, DataType::u8, {}};
  info.meta.geotransform = product.geotransform;
  info.meta.spatial_ref = product.spatial_ref;
  info.meta.map_info = product.map_info;
  info.meta.coordinate_system_string = product.coordinate_system_string;
  io::complete_georeference(info.meta);
  if (info.meta.geotransform.size() != 6) return {};
  info.meta.band_names = {"red", "green", "blue"};
  auto writer = io::create_cube(geotiff_quicklook_path(png), info);
  if (!writer) return writer.error();
  std::vector<std::uint8_t> rows(static_cast<std::size_t>(width * height * 3));
  for (std::int64_t y = 0; y < height; ++y)
    std::copy_n(image.rgb.data() + y * image.width * 3, width * 3, rows.data() + y * width * 3);
  HB_TRY((*writer)->write_rows({0, height}, std::as_bytes(std::span(rows))));
  return (*writer)->commit();
}

}  // namespace

std::string geotiff_quicklook_path(const std::string& png) {
  const auto dot = png.rfind(".png");
  return (dot == std::string::npos ? png : png.substr(0, dot)) + ".tif";
}

Status mnf_quicklook(const std::string& components, const std::string& png, double low_percent, double high_percent) {
  auto cube = io::open_cube(components);
  if (!cube) return cube.error();
  const auto& shape = (*cube)->info().shape;
  const std::int64_t channels = std::min<std::int64_t>(3, shape.bands);
  auto bands = read_bands(**cube, channels);
  if (!bands) return bands.error();
  RgbImage image;
  image.resize(shape.samples, shape.lines);
  for (std::int64_t c = 0; c < 3; ++c) {
    const auto& band = (*bands)[static_cast<std::size_t>(std::min(c, channels - 1))];
    const auto [lo, hi] = percentiles(band, low_percent, high_percent);
    for (std::int64_t p = 0; p < shape.pixels(); ++p) image.rgb[static_cast<std::size_t>(p * 3 + c)] = stretch(band[static_cast<std::size_t>(p)], lo, hi);
  }
  HB_TRY(write_png(png, image));
  return write_geotiff_quicklook(image, shape.samples, shape.lines, (*cube)->info().meta, png);
}

Result<std::int64_t> class_quicklook(const std::string& classes, const std::string& png) {
  auto cube = io::open_cube(classes);
  if (!cube) return cube.error();
  const auto& info = (*cube)->info();
  auto bands = read_bands(**cube, 1);
  if (!bands) return bands.error();
  const auto& ids = (*bands)[0];
  std::map<int, ClassStyle> present;
  for (const double v : ids) {
    const int id = std::isfinite(v) ? static_cast<int>(v) : 0;
    if (present.count(id) == 0) present.emplace(id, style_of(info.meta, id));
  }
  // Legend: a swatch and the class name per row, scaled up for large maps.
  const int scale = info.shape.lines >= 400 ? 2 : 1;
  const std::int64_t row_height = (kGlyphHeight + 4) * scale;
  std::size_t longest = 0;
  for (const auto& [id, s] : present) longest = std::max(longest, s.name.size() + 4);
  const std::int64_t swatch = 8 * scale;
  const std::int64_t legend_width = 6 * scale + swatch + 4 * scale + static_cast<std::int64_t>(longest) * kGlyphWidth * scale + 6 * scale;
  const std::int64_t legend_height = 6 * scale + static_cast<std::int64_t>(present.size()) * row_height;
  RgbImage image;
  image.resize(info.shape.samples + legend_width, std::max(info.shape.lines, legend_height));
  std::fill(image.rgb.begin(), image.rgb.end(), std::uint8_t{255});
  for (std::int64_t y = 0; y < info.shape.lines; ++y)
    for (std::int64_t x = 0; x < info.shape.samples; ++x) {
      const double v = ids[static_cast<std::size_t>(y * info.shape.samples + x)];
      const auto& c = present.at(std::isfinite(v) ? static_cast<int>(v) : 0).colour;
      std::copy(c.begin(), c.end(), image.at(x, y));
    }
  const std::uint8_t black[3] = {0, 0, 0};
  std::int64_t y = 6 * scale;
  for (const auto& [id, s] : present) {
    const std::int64_t x0 = info.shape.samples + 6 * scale;
    for (std::int64_t dy = 0; dy < swatch; ++dy)
      for (std::int64_t dx = 0; dx < swatch; ++dx) std::copy(s.colour.begin(), s.colour.end(), image.at(x0 + dx, y + dy));
    draw_text(image, x0 + swatch + 4 * scale, y, fmt::format("{:>2} {}", id, s.name), scale, black);
    y += row_height;
  }
  HB_TRY(write_png(png, image));
  HB_TRY(write_geotiff_quicklook(image, info.shape.samples, info.shape.lines, info.meta, png));
  return legend_width;
}

}  // namespace hb::jobs
