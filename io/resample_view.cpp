#include "io/resample_view.hpp"

#include <cmath>
#include <map>
#include <mutex>

#include <fmt/core.h>

#include "io/cube_view.hpp"
#include "io/resample.hpp"
#include "io/units.hpp"
#include "src/base/parallel_for.hpp"

namespace hb::io {
namespace {

constexpr std::int64_t kPixelsPerTask = 2048;

std::mutex g_targets_mutex;
std::map<std::string, std::string> g_targets;  // scene path -> target path

// Target band b takes weights [offsets[b], offsets[b + 1]): (source band, weight).
struct SparseWeights {
  std::vector<std::size_t> offsets{0};
  std::vector<std::int64_t> source;
  std::vector<double> weight;
};

std::vector<double> centres_nm(const CubeInfo& info) { return to_nanometres(info.meta.wavelength, info.meta.wavelength_units); }

// Widths in the units of the centres: the same scale applies.
std::vector<double> widths_nm(const CubeInfo& info) {
  const auto& fwhm = info.meta.fwhm;
  if (fwhm.size() != info.meta.wavelength.size() || fwhm.empty()) return {};
  const double scale = info.meta.wavelength.front() != 0 ? centres_nm(info).front() / info.meta.wavelength.front() : 1.0;
  std::vector<double> nm(fwhm);
  for (double& w : nm) w *= scale;
  return nm;
}

bool records_centres(const CubeInfo& info) {
  return static_cast<std::int64_t>(info.meta.wavelength.size()) == info.shape.bands && info.shape.bands > 0;
}

bool same_bands(const CubeInfo& scene, const CubeInfo& target) {
  if (scene.shape.bands != target.shape.bands || !records_centres(scene) || !records_centres(target)) return false;
  const auto a = centres_nm(scene);
  const auto b = centres_nm(target);
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::abs(a[i] - b[i]) > 0.01) return false;
  return true;
}

// The weights from `scene` to `target`, or bad input naming the scene (uncovered good
// target bands) or whichever records no band centres.
Result<SparseWeights> weights_between(const CubeInfo& scene, const std::string& scene_path, const CubeInfo& target,
                                      const std::string& target_path) {
  if (!records_centres(target)) return bad_input(target_path, "wavelength", "records no band centres to resample to");
  if (!records_centres(scene)) return bad_input(scene_path, "wavelength", "records no band centres to resample from");
  std::vector<std::uint8_t> gap(static_cast<std::size_t>(scene.shape.bands), 0);
  for (std::int64_t b = 0; b < scene.shape.bands; ++b) gap[static_cast<std::size_t>(b)] = scene.meta.band_is_good(b) ? 0 : 1;
  const BandMap map = map_bands(centres_nm(scene), gap, centres_nm(target), widths_nm(target));
  SparseWeights w;
  std::vector<std::int64_t> uncovered;
  for (std::size_t b = 0; b < map.bands.size(); ++b) {
    if (map.bands[b])
      for (const auto& [source, weight] : *map.bands[b]) {
        w.source.push_back(source);
        w.weight.push_back(weight);
      }
    else if (target.meta.band_is_good(static_cast<std::int64_t>(b)))
      uncovered.push_back(static_cast<std::int64_t>(b));
    w.offsets.push_back(w.source.size());
  }
  if (!uncovered.empty())
    return bad_input(scene_path, "wavelength",
                     fmt::format("does not cover {} good band(s) of {} (first: band {} at {} nm): resample to a scene "
                                 "whose good bands lie within every scene's usable bands",
                                 uncovered.size(), target_path, uncovered.front() + 1,
                                 centres_nm(target)[static_cast<std::size_t>(uncovered.front())]));
  return w;
}

CubeInfo on_target_bands(const CubeInfo& scene, const CubeInfo& target) {
  CubeInfo info = scene;
  info.type = DataType::f32;
  info.shape.bands = target.shape.bands;
  info.meta.wavelength = target.meta.wavelength;
  info.meta.wavelength_units = target.meta.wavelength_units;
  info.meta.fwhm = target.meta.fwhm;
  info.meta.bbl = target.meta.bbl;
  info.meta.band_names = target.meta.band_names;
  info.meta.scaling = {};
  info.meta.data_ignore_value.reset();
  return info;
}

// Float32 rows of the scene's bands in, float32 rows of the target's bands out; target
// bands nothing covers (bad bands of the target) read 0.
class ResampledCube final : public CubeView {
 public:
  ResampledCube(std::unique_ptr<Cube> scene, CubeInfo info, SparseWeights weights)
      : CubeView(std::move(scene), std::move(info)), weights_(std::move(weights)) {}

  Status read_rows(RowRange rows, std::span<std::byte> out) const override {
    const auto& source = inner().info();
    const std::int64_t pixels = rows.empty() ? 0 : rows.rows() * source.shape.samples;
    const std::int64_t in_bands = source.shape.bands;
    const std::int64_t out_bands = info().shape.bands;
    if (out.size() != static_cast<std::size_t>(pixels * out_bands) * sizeof(float))
      return Error{ErrorKind::internal, path(), {}, "output buffer does not match the row range"};
    std::vector<float> in(static_cast<std::size_t>(pixels * in_bands));
    HB_TRY(inner().read_rows(rows, std::as_writable_bytes(std::span(in))));
    auto* to = reinterpret_cast<float*>(out.data());
    parallel_for(pixels, kPixelsPerTask, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t p = begin; p < end; ++p) resample_pixel(&in[static_cast<std::size_t>(p * in_bands)], to + p * out_bands);
    });
    return {};
  }

 private:
  void resample_pixel(const float* in, float* out) const {
    const std::size_t bands = weights_.offsets.size() - 1;
    for (std::size_t b = 0; b < bands; ++b) {
      double v = 0;
      for (std::size_t k = weights_.offsets[b]; k < weights_.offsets[b + 1]; ++k)
        v += weights_.weight[k] * static_cast<double>(in[weights_.source[k]]);
      out[b] = static_cast<float>(v);
    }
  }

  SparseWeights weights_;
};

std::unique_ptr<Cube> as_float32_rows(std::unique_ptr<Cube> scene) {
  const auto& info = scene->info();
  if (info.type == DataType::f32 && !info.meta.data_ignore_value) return scene;
  return as_float32(std::move(scene));
}

}  // namespace

Status check_resampling(const std::vector<std::string>& scenes, const std::string& target) {
  auto target_cube = open_stored_cube(target);
  if (!target_cube) return target_cube.error();
  const CubeInfo& to = (*target_cube)->info();
  for (const auto& path : scenes) {
    auto scene = open_stored_cube(path);
    if (!scene) continue;  // reported by the pass that reads it
    if (same_bands((*scene)->info(), to)) continue;
    auto weights = weights_between((*scene)->info(), path, to, target);
    if (!weights) return weights.error();
  }
  return {};
}

Result<std::unique_ptr<Cube>> resampled_to(std::unique_ptr<Cube> scene, const std::string& target) {
  auto target_cube = open_stored_cube(target);
  if (!target_cube) return target_cube.error();
  const CubeInfo& to = (*target_cube)->info();
  if (same_bands(scene->info(), to)) return scene;
  auto weights = weights_between(scene->info(), scene->path(), to, target);
  if (!weights) return weights.error();
  CubeInfo info = on_target_bands(scene->info(), to);
  return std::unique_ptr<Cube>(std::make_unique<ResampledCube>(as_float32_rows(std::move(scene)), std::move(info),
                                                               std::move(*weights)));
}

void set_scene_band_target(const std::string& scene, std::string target) {
  const std::lock_guard lock(g_targets_mutex);
  g_targets[scene] = std::move(target);
}

std::optional<std::string> scene_band_target(const std::string& scene) {
  const std::lock_guard lock(g_targets_mutex);
  const auto found = g_targets.find(scene);
  if (found == g_targets.end()) return std::nullopt;
  return found->second;
}

}  // namespace hb::io
