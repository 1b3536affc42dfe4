// Quicklooks people open first: a false-colour PNG of MNF components 1-3 (R, G, B),
// each stretched between its low and high percentiles, and a class map PNG in the
// map's own class colours with a legend strip on the right. PNGs carry no time
// chunk, so the same inputs give the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/base/error.hpp"

namespace hb::jobs {

struct RgbImage {
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::vector<std::uint8_t> rgb;  // row-major, 3 bytes a pixel
  void resize(std::int64_t w, std::int64_t h) {
    width = w;
    height = h;
    rgb.assign(static_cast<std::size_t>(w * h * 3), 0);
  }
  std::uint8_t* at(std::int64_t x, std::int64_t y) { return rgb.data() + (y * width + x) * 3; }
};

// 8-bit RGB PNG, written under a temporary name and renamed.
Status write_png(const std::string& path, const RgbImage& image);

// Quicklooks of a product on a map grid (a geotransform, or ENVI map info) are also
// written beside the PNG as a small 3-band uint8 Cloud-Optimized GeoTIFF on that grid
// (no legend): NAME.png -> NAME.tif.
std::string geotiff_quicklook_path(const std::string& png);

// Components 1..3 of `components` (any cube) as R, G, B; non-finite pixels black.
// Image size: samples x lines.
Status mnf_quicklook(const std::string& components, const std::string& png, double low_percent, double high_percent);

// A class map (uint8/uint16 ids, ENVI class names and lookup colours when present).
// Image: (samples + legend width) x max(lines, legend height). Returns the legend width.
Result<std::int64_t> class_quicklook(const std::string& classes, const std::string& png);

// Draws `text` (letters, digits, common punctuation) at (x, y) with 5x7 glyphs scaled by `scale`.
void draw_text(RgbImage& image, std::int64_t x, std::int64_t y, const std::string& text, int scale,
               const std::uint8_t colour[3]);
constexpr int kGlyphWidth = 6;   // 5 columns + 1 spacing
constexpr int kGlyphHeight = 8;  // 7 rows + 1 spacing

}  // namespace hb::jobs
