#include "io/mask.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>

#include "io/cube_view.hpp"
#include "io/units.hpp"

namespace hb::io {
namespace {

constexpr const char* kAggregateFlag = "Aggregate Flag";

std::mutex g_mutex;
std::map<std::string, MaskSpec>& masks() {
  static std::map<std::string, MaskSpec> registered;
  return registered;
}

// The mask's bands that exclude a pixel when nonzero.
Result<std::vector<std::int64_t>> flag_bands(const Cube& mask, const std::vector<std::string>& names) {
  const auto& meta = mask.info().meta;
  const std::int64_t bands = mask.info().shape.bands;
  if (names.empty() && bands == 1) return std::vector<std::int64_t>{0};
  std::vector<std::string> wanted = names;
  if (wanted.empty()) wanted.push_back(kAggregateFlag);
  std::vector<std::int64_t> chosen;
  for (const auto& name : wanted) {
    const auto at = std::find(meta.band_names.begin(), meta.band_names.end(), name);
    if (at == meta.band_names.end())
      return bad_input(mask.path(), "mask_bands",
                       "no band named '" + name + "' (a mask of " + std::to_string(bands) +
                           " bands needs --mask-bands naming its flag bands)");
    chosen.push_back(at - meta.band_names.begin());
  }
  return chosen;
}

template <class T>
void exclude_pixels(std::span<std::byte> out, const std::vector<std::uint8_t>& excluded, std::int64_t bands, T marker) {
  for (std::size_t p = 0; p < excluded.size(); ++p) {
    if (!excluded[p]) continue;
    for (std::int64_t b = 0; b < bands; ++b)
      std::memcpy(out.data() + (p * static_cast<std::size_t>(bands) + static_cast<std::size_t>(b)) * sizeof(T), &marker,
                  sizeof(T));
  }
}

class MaskedCube final : public CubeView {
 public:
  MaskedCube(std::unique_ptr<Cube> scene, std::unique_ptr<Cube> mask, std::vector<std::int64_t> flags)
      : CubeView(std::move(scene), {}), mask_(std::move(mask)), flags_(std::move(flags)) {}

  const CubeInfo& info() const override { return inner().info(); }
  bool reads_through_hdf5() const override { return inner().reads_through_hdf5() || mask_->reads_through_hdf5(); }

  Status read_rows(RowRange rows, std::span<std::byte> out) const override {
    HB_TRY(inner().read_rows(rows, out));
    if (rows.empty()) return {};
    auto excluded = excluded_pixels(rows);
    if (!excluded) return excluded.error();
    const auto& info = inner().info();
    const std::int64_t bands = info.shape.bands;
    switch (info.type) {
      case DataType::f32: exclude_pixels(out, *excluded, bands, std::numeric_limits<float>::quiet_NaN()); break;
      case DataType::f64: exclude_pixels(out, *excluded, bands, std::numeric_limits<double>::quiet_NaN()); break;
      default: exclude_by_ignore_value(out, *excluded, info); break;
    }
    return {};
  }

 private:
  Result<std::vector<std::uint8_t>> excluded_pixels(RowRange rows) const {
    const auto& minfo = mask_->info();
    auto tile = mask_->read_tile(rows);
    if (!tile) return tile.error();
    const std::int64_t pixels = rows.rows() * minfo.shape.samples;
    std::vector<std::uint8_t> excluded(static_cast<std::size_t>(pixels), 0);
    auto widened = samples_as_double(*tile);
    for (std::int64_t p = 0; p < pixels; ++p)
      for (std::int64_t band : flags_)
        if (widened[static_cast<std::size_t>(p * minfo.shape.bands + band)] != 0) excluded[static_cast<std::size_t>(p)] = 1;
    return excluded;
  }

  static std::vector<double> samples_as_double(const Tile& tile) {
    std::vector<double> values(static_cast<std::size_t>(tile.pixels() * tile.bands()));
    const std::byte* at = tile.bytes().data();
    const std::size_t width = bytes_per_sample(tile.type());
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = sample_as_double(tile.type(), at + i * width);
    return values;
  }

  static double sample_as_double(DataType type, const std::byte* at) {
    auto load = [at]<class T>(T) {
      T v;
      std::memcpy(&v, at, sizeof v);
      return static_cast<double>(v);
    };
    switch (type) {
      case DataType::u8: return load(std::uint8_t{});
      case DataType::i16: return load(std::int16_t{});
      case DataType::u16: return load(std::uint16_t{});
      case DataType::i32: return load(std::int32_t{});
      case DataType::u32: return load(std::uint32_t{});
      case DataType::i64: return load(std::int64_t{});
      case DataType::u64: return load(std::uint64_t{});
      case DataType::f32: return load(float{});
      case DataType::f64: return load(double{});
    }
    return 0;
  }

  static void exclude_by_ignore_value(std::span<std::byte> out, const std::vector<std::uint8_t>& excluded,
                                      const CubeInfo& info) {
    const double ignore = *info.meta.data_ignore_value;
    const std::int64_t bands = info.shape.bands;
    switch (info.type) {
      case DataType::u8: return exclude_pixels(out, excluded, bands, static_cast<std::uint8_t>(ignore));
      case DataType::i16: return exclude_pixels(out, excluded, bands, static_cast<std::int16_t>(ignore));
      case DataType::u16: return exclude_pixels(out, excluded, bands, static_cast<std::uint16_t>(ignore));
      case DataType::i32: return exclude_pixels(out, excluded, bands, static_cast<std::int32_t>(ignore));
      case DataType::u32: return exclude_pixels(out, excluded, bands, static_cast<std::uint32_t>(ignore));
      case DataType::i64: return exclude_pixels(out, excluded, bands, static_cast<std::int64_t>(ignore));
      case DataType::u64: return exclude_pixels(out, excluded, bands, static_cast<std::uint64_t>(ignore));
      default: return;
    }
  }

  std::unique_ptr<Cube> mask_;
  std::vector<std::int64_t> flags_;
};

// An integer ignore value the scene's type can hold exactly, so masked pixels can carry it.
bool has_exact_ignore_value(const CubeInfo& info) {
  if (!info.meta.data_ignore_value) return false;
  const double v = *info.meta.data_ignore_value;
  return std::isfinite(v) && v == std::floor(v) && std::abs(v) < 9.0e15 &&
         (info.type != DataType::u8 || (v >= 0 && v <= 255)) &&
         (info.type != DataType::i16 || (v >= -32768 && v <= 32767)) &&
         (info.type != DataType::u16 || (v >= 0 && v <= 65535)) &&
         ((info.type != DataType::u32 && info.type != DataType::u64) || v >= 0);
}

}  // namespace

Result<std::unique_ptr<Cube>> with_mask(std::unique_ptr<Cube> scene, const MaskSpec& spec) {
  auto mask = open_stored_cube(spec.path);
  if (!mask) return mask.error();
  const auto& sshape = scene->info().shape;
  const auto& mshape = (*mask)->info().shape;
  if (mshape.lines != sshape.lines || mshape.samples != sshape.samples)
    return bad_input(spec.path, "shape",
                     std::to_string(mshape.lines) + " lines x " + std::to_string(mshape.samples) +
                         " samples, but the scene " + scene->path() + " has " + std::to_string(sshape.lines) + " x " +
                         std::to_string(sshape.samples));
  auto flags = flag_bands(**mask, spec.bands);
  if (!flags) return flags.error();
  const auto type = scene->info().type;
  const bool is_float = type == DataType::f32 || type == DataType::f64;
  if (!is_float && !has_exact_ignore_value(scene->info())) scene = as_float32(std::move(scene));
  return std::unique_ptr<Cube>(std::make_unique<MaskedCube>(std::move(scene), std::move(*mask), std::move(*flags)));
}

void set_scene_mask(const std::string& scene, MaskSpec mask) {
  const std::lock_guard lock(g_mutex);
  if (mask.path.empty())
    masks().erase(scene);
  else
    masks()[scene] = std::move(mask);
}

const MaskSpec* scene_mask(const std::string& scene) {
  const std::lock_guard lock(g_mutex);
  const auto it = masks().find(scene);
  return it == masks().end() ? nullptr : &it->second;
}

}  // namespace hb::io
