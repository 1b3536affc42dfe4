#include "src/knn/features.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "io/parallel_for.hpp"

namespace hb::knn {
namespace {

constexpr std::int64_t kPixelsPerThread = 4096;

}  // namespace

Result<FeatureSpec> parse_feature_spec(const std::string& text) {
  if (text == "bands") return FeatureSpec{};
  if (text.rfind("mnf:", 0) == 0) {
    int n = 0;
    const char* first = text.data() + 4;
    const char* last = text.data() + text.size();
    const auto [end, ec] = std::from_chars(first, last, n);
    if (ec == std::errc() && end == last && first != last && n >= 1) return FeatureSpec{FeatureSpec::Kind::mnf, n};
  }
  return Error{ErrorKind::usage, {}, "--features", "expected 'bands' or 'mnf:N' with N >= 1, got '" + text + "'"};
}

std::string feature_spec_name(const FeatureSpec& spec) {
  return spec.kind == FeatureSpec::Kind::bands ? "bands" : "mnf:" + std::to_string(spec.components);
}

BandSelection select_good_bands(const io::CubeInfo& info) {
  BandSelection s;
  s.scene_bands = info.shape.bands;
  s.wavelength_units = info.meta.wavelength_units;
  const bool has_wavelength = static_cast<std::int64_t>(info.meta.wavelength.size()) == info.shape.bands;
  for (std::int64_t b = 0; b < info.shape.bands; ++b) {
    if (!info.meta.band_is_good(b)) continue;
    s.bands.push_back(b);
    if (has_wavelength) s.wavelength.push_back(info.meta.wavelength[static_cast<std::size_t>(b)]);
  }
  return s;
}

void extract_features(const float* samples, std::int64_t pixels, const BandSelection& selection,
                      std::optional<double> ignore_value, float* features, std::uint8_t* valid) {
  const std::int64_t dims = selection.dims();
  io::parallel_for(pixels, kPixelsPerThread, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t p = begin; p < end; ++p) {
      const float* in = samples + p * selection.scene_bands;
      float* out = features + p * dims;
      bool ok = true;
      for (std::int64_t f = 0; f < dims; ++f) {
        const float x = in[selection.bands[static_cast<std::size_t>(f)]];
        ok = ok && std::isfinite(x) && !(ignore_value && x == static_cast<float>(*ignore_value));
        out[f] = x;
      }
      valid[p] = ok ? 1 : 0;
      if (!ok) std::fill(out, out + dims, 0.0f);
    }
  });
}

}  // namespace hb::knn
