#include "src/classify/features.hpp"

#include <algorithm>
#include <limits>
#include <type_traits>
#include <charconv>
#include <cmath>

#include "src/base/data_type.hpp"
#include "src/base/parallel_for.hpp"
#include "src/base/physical_sample.hpp"

namespace hb::classify {
namespace {

constexpr std::int64_t kPixelsPerThread = 4096;
constexpr std::int64_t kPackPixels = 8192;  // pixels per packing piece

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

namespace {

// Runs of consecutive scene bands among the used ones: copied as blocks.
struct BandRun {
  std::int64_t scene_band, feature, count;
};

std::vector<BandRun> band_runs(const BandSelection& selection) {
  std::vector<BandRun> runs;
  for (std::int64_t f = 0; f < selection.dims(); ++f) {
    const auto b = selection.bands[static_cast<std::size_t>(f)];
    if (!runs.empty() && runs.back().scene_band + runs.back().count == b) ++runs.back().count;
    else runs.push_back({b, f, 1});
  }
  return runs;
}

// A sample rules its pixel out when it is not finite (v - v != 0 holds exactly for NaN
// and infinities) or equals the data ignore value, compared as float whatever the data
// type (NaN stands for "no ignore value": it equals nothing). Branch-free: it vectorises.
int unusable_sample(float v, float ignored) {
  return static_cast<int>(v == ignored) | static_cast<int>(!(v - v == 0.0f));
}

// Integers are always finite: without an ignore value no sample can rule a pixel out.
template <class T>
bool needs_check(std::optional<double> ignore_value) {
  return !std::is_integral_v<T> || ignore_value.has_value();
}

template <class T>
void extract_typed(const T* samples, std::int64_t pixels, const BandSelection& selection,
                   std::optional<double> ignore_value, float* features, std::uint8_t* valid) {
  const std::int64_t dims = selection.dims();
  const auto runs = band_runs(selection);
  const bool check = needs_check<T>(ignore_value);
  const float ignored = float_ignore_value(ignore_value);
  parallel_for(pixels, kPixelsPerThread, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t p = begin; p < end; ++p) {
      const T* in = samples + p * selection.scene_bands;
      float* out = features + p * dims;
      for (const auto& run : runs)
        for (std::int64_t i = 0; i < run.count; ++i) out[run.feature + i] = static_cast<float>(in[run.scene_band + i]);
      int bad = 0;
      for (std::int64_t f = 0; check && f < dims; ++f) bad |= unusable_sample(out[f], ignored);
      valid[p] = bad ? 0 : 1;
      if (bad) std::fill(out, out + dims, 0.0f);
    }
  });
}

// valid[p] for p in [begin, end): 1 unless a used band's sample is unusable(sample).
template <class T, class Unusable>
void flag_pixels(const T* samples, std::int64_t begin, std::int64_t end, std::int64_t scene_bands,
                 std::span<const BandRun> runs, Unusable unusable, std::uint8_t* valid) {
  for (std::int64_t p = begin; p < end; ++p) {
    const T* in = samples + p * scene_bands;
    int bad = 0;
    for (const auto& run : runs)
      for (std::int64_t i = 0; i < run.count; ++i) bad |= static_cast<int>(unusable(in[run.scene_band + i]));
    valid[p] = bad ? 0 : 1;
  }
}

// For a narrow T, float(v) is exact, so the float compare is an integer one, with no
// conversion and no finiteness test (the float form took 7 s of a 40 GB int16 scene on
// 16 cores): a sample rules its pixel out when it equals the ignore value, if that is
// one of T's values; otherwise none can.
template <class T>
std::optional<T> narrow_target(std::optional<double> ignore_value) {
  const float ignored = float_ignore_value(ignore_value);  // NaN without one: fails every test
  if (ignored != std::floor(ignored) || !(ignored >= float{std::numeric_limits<T>::min()}) ||
      !(ignored <= float{std::numeric_limits<T>::max()}))
    return std::nullopt;
  return static_cast<T>(ignored);
}

// The validity flags of pixels [begin, end), on the calling thread.
template <class T>
void validity_range(const T* samples, std::int64_t begin, std::int64_t end, const BandSelection& selection,
                    std::optional<double> ignore_value, std::span<const BandRun> runs, std::uint8_t* valid) {
  const float ignored = float_ignore_value(ignore_value);
  bool all_valid = !needs_check<T>(ignore_value);
  std::optional<T> target;
  if constexpr (std::is_integral_v<T> && sizeof(T) <= 2) {
    target = narrow_target<T>(ignore_value);
    all_valid = all_valid || !target;
  }
  if (all_valid) {
    std::fill(valid + begin, valid + end, std::uint8_t{1});
  } else if constexpr (std::is_integral_v<T> && sizeof(T) <= 2) {
    flag_pixels(samples, begin, end, selection.scene_bands, runs, [t = *target](T v) { return v == t; }, valid);
  } else {
    flag_pixels(samples, begin, end, selection.scene_bands, runs,
                [ignored](T v) { return unusable_sample(static_cast<float>(v), ignored); }, valid);
  }
}

template <class T>
void validity_typed(const T* samples, std::int64_t pixels, const BandSelection& selection,
                    std::optional<double> ignore_value, std::uint8_t* valid) {
  const auto runs = band_runs(selection);
  parallel_for(pixels, kPixelsPerThread, [&](std::int64_t begin, std::int64_t end) {
    validity_range(samples, begin, end, selection, ignore_value, runs, valid);
  });
}

// Feature f of a query from its raw sample: rounded to float first, then shifted in
// double and rounded once more (the bits of extract_features followed by
// pack_valid_pixels). The CUDA widening kernel (kernels/convert.cuh) computes the same.
float shifted_feature(float v, std::span<const double> shift, std::size_t f) {
  return shift.empty() ? v : static_cast<float>(static_cast<double>(v) - shift[f]);
}

// The valid pixels' features, widened and shifted in one pass over the raw samples.
template <class T>
void pack_typed(const T* samples, const BandSelection& selection, std::span<const double> shift,
                std::span<const std::uint8_t> valid, std::span<const std::int64_t> first_query, float* queries,
                std::int64_t* pixel) {
  const std::int64_t dims = selection.dims();
  const std::int64_t pixels = static_cast<std::int64_t>(valid.size());
  const auto pieces = static_cast<std::int64_t>(first_query.size()) - 1;
  const auto runs = band_runs(selection);
  parallel_for(pieces, 1, [&](std::int64_t begin, std::int64_t end) {
    for (auto piece = begin; piece < end; ++piece) {
      std::int64_t q = first_query[static_cast<std::size_t>(piece)];
      for (std::int64_t p = piece * kPackPixels; p < std::min(pixels, (piece + 1) * kPackPixels); ++p) {
        if (!valid[static_cast<std::size_t>(p)]) continue;
        pixel[q] = p;
        const T* in = samples + p * selection.scene_bands;
        float* out = queries + q * dims;
        for (const auto& run : runs)
          for (std::int64_t i = 0; i < run.count; ++i) {
            const auto f = static_cast<std::size_t>(run.feature + i);
            out[f] = shifted_feature(static_cast<float>(in[run.scene_band + i]), shift, f);
          }
        ++q;
      }
    }
  });
}

// Validity of every pixel of the tile and the first query row of each packing piece,
// in one parallel pass (each piece's flags counted while they are in cache).
std::vector<std::int64_t> count_valid(const io::Tile& tile, const BandSelection& selection,
                                      std::optional<double> ignore_value, std::vector<std::uint8_t>& valid) {
  const std::int64_t pixels = tile.pixels();
  valid.resize(static_cast<std::size_t>(pixels));
  const auto runs = band_runs(selection);
  const std::int64_t pieces = (pixels + kPackPixels - 1) / kPackPixels;
  std::vector<std::int64_t> first(static_cast<std::size_t>(pieces) + 1, 0);
  parallel_for(pieces, 1, [&](std::int64_t begin, std::int64_t end) {
    for (auto piece = begin; piece < end; ++piece) {
      const std::int64_t from = piece * kPackPixels, to = std::min(pixels, (piece + 1) * kPackPixels);
      visit_data_type(tile.type(), [&](auto zero) {
        using T = decltype(zero);
        validity_range(tile.as<T>().data(), from, to, selection, ignore_value, runs, valid.data());
      });
      first[static_cast<std::size_t>(piece) + 1] = std::count(valid.begin() + from, valid.begin() + to, std::uint8_t{1});
    }
  });
  for (std::size_t i = 1; i < first.size(); ++i) first[i] += first[i - 1];
  return first;
}

}  // namespace

void extract_features(const float* samples, std::int64_t pixels, const BandSelection& selection,
                      std::optional<double> ignore_value, float* features, std::uint8_t* valid) {
  extract_typed(samples, pixels, selection, ignore_value, features, valid);
}

void extract_features(const io::Tile& tile, std::int64_t first, std::int64_t count, const BandSelection& selection,
                      std::optional<double> ignore_value, float* features, std::uint8_t* valid) {
  visit_data_type(tile.type(), [&](auto zero) {
    using T = decltype(zero);
    extract_typed(tile.as<T>().data() + first * selection.scene_bands, count, selection, ignore_value, features, valid);
  });
}

void extract_validity(const io::Tile& tile, const BandSelection& selection, std::optional<double> ignore_value,
                      std::uint8_t* valid) {
  visit_data_type(tile.type(), [&](auto zero) {
    using T = decltype(zero);
    validity_typed(tile.as<T>().data(), tile.pixels(), selection, ignore_value, valid);
  });
}

std::int64_t pack_valid_queries(const io::Tile& tile, const BandSelection& selection,
                                std::optional<double> ignore_value, std::span<const double> shift, float* queries,
                                std::vector<std::uint8_t>& valid, std::vector<std::int64_t>& pixel) {
  const auto first = count_valid(tile, selection, ignore_value, valid);
  pixel.resize(static_cast<std::size_t>(first.back()));
  visit_data_type(tile.type(), [&](auto zero) {
    using T = decltype(zero);
    pack_typed(tile.as<T>().data(), selection, shift, valid, first, queries, pixel.data());
  });
  return first.back();
}

bool is_narrow(DataType type) {
  return type == DataType::u8 || type == DataType::i16 || type == DataType::u16;
}

float float_ignore_value(std::optional<double> ignore_value) {
  return ignore_value ? static_cast<float>(*ignore_value) : std::numeric_limits<float>::quiet_NaN();
}

std::optional<std::int64_t> narrow_ignore_target(DataType type, std::optional<double> ignore_value) {
  std::optional<std::int64_t> target;
  visit_data_type(type, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_integral_v<T> && sizeof(T) <= 2)
      if (const auto t = narrow_target<T>(ignore_value)) target = *t;
  });
  return target;
}

std::int64_t valid_pixels(const io::Tile& tile, const BandSelection& selection, std::optional<double> ignore_value,
                          std::vector<std::uint8_t>& valid, std::vector<std::int64_t>& pixel) {
  const auto first = count_valid(tile, selection, ignore_value, valid);
  pixel.resize(static_cast<std::size_t>(first.back()));
  const std::int64_t pixels = tile.pixels();
  const auto pieces = static_cast<std::int64_t>(first.size()) - 1;
  parallel_for(pieces, 1, [&](std::int64_t begin, std::int64_t end) {
    for (auto piece = begin; piece < end; ++piece) {
      std::int64_t q = first[static_cast<std::size_t>(piece)];
      for (std::int64_t p = piece * kPackPixels; p < std::min(pixels, (piece + 1) * kPackPixels); ++p)
        if (valid[static_cast<std::size_t>(p)]) pixel[static_cast<std::size_t>(q++)] = p;
    }
  });
  return first.back();
}

void gather_queries(const io::Tile& tile, std::span<const std::int64_t> pixel, std::span<const std::int64_t> bands,
                    std::span<const double> shift, float* queries) {
  const auto dims = static_cast<std::int64_t>(bands.size());
  const io::StoredUnits* units = tile.units();
  visit_data_type(tile.type(), [&](auto zero) {
    using T = decltype(zero);
    const T* samples = tile.as<T>().data();
    const auto value = [units](T stored, std::int64_t band) {
      if (units == nullptr) return static_cast<float>(stored);
      const auto b = static_cast<std::size_t>(band);
      return physical_sample(static_cast<double>(stored), units->gain[b], units->offset[b]);
    };
    parallel_for(static_cast<std::int64_t>(pixel.size()), kPixelsPerThread, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t q = begin; q < end; ++q) {
        const T* in = samples + pixel[static_cast<std::size_t>(q)] * tile.bands();
        for (std::int64_t f = 0; f < dims; ++f) {
          const auto b = static_cast<std::size_t>(f);
          queries[q * dims + f] = shifted_feature(value(in[bands[b]], bands[b]), shift, b);
        }
      }
    });
  });
}

}  // namespace hb::classify
