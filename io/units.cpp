#include "io/units.hpp"

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "io/cube_view.hpp"
#include "src/base/byte_pool.hpp"
#include "src/base/parallel_for.hpp"
#include "src/base/physical_sample.hpp"

namespace hb::io {
namespace {

std::atomic<Units> g_scene_units{Units::raw};  // the command line edge chooses physical

constexpr std::int64_t kPixelsPerTask = 4096;

// The header keys a physical view no longer describes (its numbers are physical).
bool is_scaling_key(const std::string& key) {
  return key == "data gain values" || key == "data offset values" || key == "reflectance scale factor";
}

CubeInfo physical_info(const CubeInfo& stored) {
  CubeInfo info = stored;
  info.type = DataType::f32;
  info.meta.scaling = {};
  info.meta.data_ignore_value.reset();  // no-data pixels read as NaN
  std::erase_if(info.meta.extra, [](const auto& entry) { return is_scaling_key(entry.first); });
  return info;
}

template <class T>
T load(const std::byte* at) {
  T value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

// Rows as float32 gain x stored + offset per band, no-data as NaN.
class PhysicalCube final : public CubeView {
 public:
  PhysicalCube(std::unique_ptr<Cube> stored, Scaling scaling)
      : CubeView(std::move(stored), {}),
        stored_(inner().info()),
        units_{std::move(scaling.gain), std::move(scaling.offset), stored_.meta.data_ignore_value} {
    info_ = physical_info(stored_);
  }

  const CubeInfo& info() const override { return info_; }

  // The stored cube and its units, for a device that widens narrow integers itself:
  // wider types gain nothing on the link.
  std::optional<DeviceSource> stored_source() const {
    const DataType type = stored_.type;
    if (type != DataType::u8 && type != DataType::i16 && type != DataType::u16) return std::nullopt;
    // Every physical value finite (a device lists valid pixels by the stored ignore value).
    for (std::size_t band = 0; band < units_.gain.size(); ++band)
      if (!(std::abs(units_.gain[band]) * 65536.0 + std::abs(units_.offset[band]) < 1e38)) return std::nullopt;
    return DeviceSource{inner(), &units_};
  }

  Status read_rows(RowRange rows, std::span<std::byte> out) const override {
    const std::size_t samples = rows.empty() ? 0 : static_cast<std::size_t>(rows.rows() * stored_.shape.samples *
                                                                            stored_.shape.bands);
    if (out.size() != samples * sizeof(float))
      return Error{ErrorKind::internal, path(), {}, "output buffer does not match the row range"};
    // The stored rows go to a buffer kept between reads, and are converted into `out`
    // by every core: one core converted about 1 GB/s, a fifth of what the GPU passes
    // take in.
    const std::size_t bytes = samples * bytes_per_sample(stored_.type);
    BytePool::Bytes stored = buffers_.take(bytes);
    const std::span<std::byte> raw(stored.data(), bytes);
    const Status read = inner().read_rows(rows, raw);
    if (!read.ok()) {
      buffers_.give(std::move(stored));
      return read;
    }
    const auto bands = static_cast<std::int64_t>(stored_.shape.bands);
    const std::int64_t pixels = bands > 0 ? static_cast<std::int64_t>(samples) / bands : 0;
    parallel_for(pixels, kPixelsPerTask, [&](std::int64_t begin, std::int64_t end) {
      const auto first = static_cast<std::size_t>(begin * bands);
      const auto count = static_cast<std::size_t>((end - begin) * bands);
      convert(raw.data() + first * bytes_per_sample(stored_.type), reinterpret_cast<float*>(out.data()) + first, count);
    });
    buffers_.give(std::move(stored));
    return {};
  }

 private:
  void convert(const std::byte* raw, float* out, std::size_t samples) const {
    switch (stored_.type) {
      case DataType::u8: return convert_typed<std::uint8_t>(raw, out, samples);
      case DataType::i16: return convert_typed<std::int16_t>(raw, out, samples);
      case DataType::u16: return convert_typed<std::uint16_t>(raw, out, samples);
      case DataType::i32: return convert_typed<std::int32_t>(raw, out, samples);
      case DataType::u32: return convert_typed<std::uint32_t>(raw, out, samples);
      case DataType::f32: return convert_typed<float>(raw, out, samples);
      case DataType::i64: return convert_typed<std::int64_t>(raw, out, samples);
      case DataType::u64: return convert_typed<std::uint64_t>(raw, out, samples);
      case DataType::f64: return convert_typed<double>(raw, out, samples);
    }
  }

  // Whole pixels: `samples` is a multiple of the band count. The units are read into
  // locals and integers skip the finiteness test: half the time of testing the optional
  // ignore value and every sample's finiteness in the loop, with the same bits.
  template <class T>
  void convert_typed(const std::byte* raw, float* out, std::size_t samples) const {
    const auto bands = static_cast<std::size_t>(stored_.shape.bands);
    const double* gain = units_.gain.data();
    const double* offset = units_.offset.data();
    const bool has_ignore = units_.ignore.has_value();
    const double ignore = units_.ignore.value_or(0.0);
    constexpr float kNoData = std::numeric_limits<float>::quiet_NaN();
    for (std::size_t p = 0; p < samples; p += bands) {
      const std::byte* in = raw + p * sizeof(T);
      float* pixel = out + p;
      for (std::size_t band = 0; band < bands; ++band) {
        const double x = static_cast<double>(load<T>(in + band * sizeof(T)));
        float value = physical_sample(x, gain[band], offset[band]);
        if constexpr (!std::is_integral_v<T>)
          if (!std::isfinite(x)) value = kNoData;
        pixel[band] = has_ignore && x == ignore ? kNoData : value;
      }
    }
  }

  CubeInfo stored_;
  StoredUnits units_;
  CubeInfo info_;
  // Buffers of stored rows, reused: reads come from a new thread a tile (TileReader),
  // and a fresh buffer paid its page faults every time.
  mutable BytePool buffers_;
};

}  // namespace

std::optional<Units> units_from_name(std::string_view name) {
  if (name == "physical") return Units::physical;
  if (name == "raw") return Units::raw;
  return std::nullopt;
}

const char* units_name(Units units) { return units == Units::physical ? "physical" : "raw"; }

void set_scene_units(Units units) { g_scene_units.store(units); }
Units scene_units() { return g_scene_units.load(); }

std::unique_ptr<Cube> with_units(std::unique_ptr<Cube> cube, Units units) {
  if (units == Units::raw || !cube->info().meta.scaling.applies()) return cube;
  Scaling scaling = cube->info().meta.scaling;
  return std::make_unique<PhysicalCube>(std::move(cube), std::move(scaling));
}

DeviceSource device_source(const Cube& cube) {
  if (const auto* physical = dynamic_cast<const PhysicalCube*>(&cube))
    if (auto stored = physical->stored_source()) return *stored;
  return {cube, nullptr};
}

std::unique_ptr<Cube> as_float32(std::unique_ptr<Cube> cube) {
  const auto bands = static_cast<std::size_t>(cube->info().shape.bands);
  Scaling identity{std::vector<double>(bands, 1.0), std::vector<double>(bands, 0.0), {}, {}};
  return std::make_unique<PhysicalCube>(std::move(cube), std::move(identity));
}

}  // namespace hb::io
