#include "src/classify/class_raster.hpp"

#include <atomic>
#include <type_traits>
#include <utility>

#include <fmt/core.h>

#include "src/base/parallel_for.hpp"

namespace hb::classify {

Result<std::vector<std::uint16_t>> read_class_raster(const io::Cube& truth, const io::CubeShape& scene_shape,
                                                     std::optional<RowRange> rows) {
  const auto& info = truth.info();
  if (info.shape.bands != 1) return bad_input(truth.path(), "bands", "a class raster has exactly one band");
  if (info.shape.lines != scene_shape.lines)
    return bad_input(truth.path(), "lines", fmt::format("{} lines, the scene has {}", info.shape.lines, scene_shape.lines));
  if (info.shape.samples != scene_shape.samples)
    return bad_input(truth.path(), "samples",
                     fmt::format("{} samples, the scene has {}", info.shape.samples, scene_shape.samples));
  if (!is_integer(info.type)) return bad_input(truth.path(), "data type", "class ids must be integers");
  const RowRange span = rows.value_or(RowRange{0, info.shape.lines});
  const std::int64_t pixels = span.rows() * info.shape.samples;
  std::vector<std::byte> raw(static_cast<std::size_t>(span.rows() * info.bytes_per_row()));
  HB_TRY(truth.read_rows(span, raw));
  std::vector<std::uint16_t> ids(static_cast<std::size_t>(pixels));
  std::atomic<bool> ok = true;
  visit_data_type(info.type, [&](auto zero) {
    using T = decltype(zero);
    const auto* values = reinterpret_cast<const T*>(raw.data());
    // On every core: a 40 GB scene's raster has 89 M pixels, and every rank reads it.
    parallel_for(static_cast<std::int64_t>(ids.size()), std::int64_t{1} << 20, [&](std::int64_t begin, std::int64_t end) {
      bool fits = true;
      for (auto p = static_cast<std::size_t>(begin); p < static_cast<std::size_t>(end); ++p) {
        if constexpr (std::is_integral_v<T>) fits = fits && std::in_range<std::uint16_t>(values[p]);
        else fits = fits && values[p] >= 0 && values[p] <= 65535;  // not reached: the type is an integer
        ids[p] = static_cast<std::uint16_t>(values[p]);
      }
      if (!fits) ok = false;
    });
  });
  if (!ok) return bad_input(truth.path(), "data", "class ids must be in 0..65535");
  return ids;
}

}  // namespace hb::classify
