#include "src/synth/outputs.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fmt/core.h>
#include <string_view>
#include <thread>
#include <vector>
#include "src/base/tile_budget.hpp"

namespace hb::synth {
namespace {

std::string description(const SceneModel& m, const char* what) {
  return fmt::format("hyperbatch synthetic AVIRIS-like scene (seed {}, {} classes): {}", m.options.seed, m.classes(),
                     what);
}

void set_wavelengths(const SceneModel& m, io::Metadata& meta) {
  meta.wavelength = m.wavelengths.centre_nm;
  meta.fwhm = m.wavelengths.fwhm_nm;
  meta.wavelength_units = "Nanometers";
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

}  // namespace

OutputPaths output_paths(const std::string& out) {
  constexpr std::array<std::string_view, 6> kDataSuffixes{".img", ".dat", ".raw", ".bsq", ".bil", ".bip"};
  const std::string ext = lower(std::filesystem::path(out).extension().string());
  const bool hdf5 = io::format_from_path(out) == io::CubeFormat::hdf5;
  const bool envi_named = ext == ".hdr" || std::find(kDataSuffixes.begin(), kDataSuffixes.end(), ext) != kDataSuffixes.end();
  const std::string base = (hdf5 || envi_named) ? out.substr(0, out.size() - ext.size()) : out;
  OutputPaths paths;
  paths.scene_target = (hdf5 || envi_named) ? out : base + ".hdr";
  paths.scene = hdf5 ? out : base + ".hdr";
  paths.truth = base + "_truth.hdr";
  paths.library_data = base + "_library.sli";
  paths.library = base + "_library.hdr";
  return paths;
}

io::CubeInfo scene_info(const SceneModel& m) {
  io::CubeInfo info;
  info.shape = {m.lines(), m.samples(), m.bands()};
  info.type = DataType::i16;
  auto& meta = info.meta;
  meta.description = description(m, "surface reflectance x 10000 with noise and detector striping");
  set_wavelengths(m, meta);
  meta.data_ignore_value = kFillValue;
  meta.band_names.reserve(static_cast<std::size_t>(m.bands()));
  for (std::int64_t b = 0; b < m.bands(); ++b)
    meta.band_names.push_back(
        fmt::format("Band {} ({:.1f} nm)", b + 1, m.wavelengths.centre_nm[static_cast<std::size_t>(b)]));
  meta.extra.emplace_back("reflectance scale factor", "10000");
  meta.envi_interleave = m.options.interleave;
  meta.envi_byte_order = ByteOrder::little;
  return info;
}

io::CubeInfo truth_info(const SceneModel& m) {
  io::CubeInfo info;
  info.shape = {m.lines(), m.samples(), 1};
  info.type = DataType::u8;
  auto& meta = info.meta;
  meta.description = description(m, "material class truth (0 = no data)");
  meta.file_type = "ENVI Classification";
  meta.classes = m.classes() + 1;
  meta.class_names.push_back("Unclassified");
  meta.class_lookup = {0, 0, 0};
  for (const auto& material : m.materials) {
    meta.class_names.push_back(material.name);
    meta.class_lookup.insert(meta.class_lookup.end(), material.colour.begin(), material.colour.end());
  }
  meta.band_names = {"Material class"};
  meta.envi_byte_order = ByteOrder::little;
  return info;
}

io::CubeInfo library_info(const SceneModel& m) {
  io::CubeInfo info;
  info.shape = {m.classes(), m.bands(), 1};  // a spectral library: one spectrum per line
  info.type = DataType::f32;
  auto& meta = info.meta;
  meta.description =
      description(m, "material spectra the noise-free pixels are made of (reflectance x atmospheric transmittance)");
  meta.file_type = "ENVI Spectral Library";
  set_wavelengths(m, meta);
  for (const auto& material : m.materials) meta.spectra_names.push_back(material.name);
  meta.extra.emplace_back("reflectance scale factor", "1.0");
  meta.envi_byte_order = ByteOrder::little;
  return info;
}

std::int64_t tile_rows_for_budget(const SceneModel& m, std::int64_t tile_budget_bytes) {
  const std::int64_t row_bytes = m.samples() * (m.bands() * static_cast<std::int64_t>(sizeof(std::int16_t)) + 1);
  return tile_rows_for(row_bytes, tile_budget_bytes, m.lines());
}

Status stream_scene(const SceneModel& m, io::CubeWriter& scene, io::CubeWriter& truth, const Progress& progress) {
  const std::int64_t tile_rows = m.options.tile_rows;
  const std::int64_t rows_per_tile =
      tile_rows > 0 ? std::min(tile_rows, m.lines()) : tile_rows_for_budget(m, kTileBudgetBytes);
  const int threads = m.options.threads > 0 ? m.options.threads
                                            : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const auto pixels_per_tile = static_cast<std::size_t>(rows_per_tile * m.samples());
  std::vector<std::int16_t> pixels(pixels_per_tile * static_cast<std::size_t>(m.bands()));
  std::vector<std::uint8_t> classes(pixels_per_tile);
  for (std::int64_t begin = 0; begin < m.lines(); begin += rows_per_tile) {
    const RowRange rows{begin, std::min(begin + rows_per_tile, m.lines())};
    const auto pixel_count = static_cast<std::size_t>(rows.rows() * m.samples());
    const std::span<std::int16_t> tile(pixels.data(), pixel_count * static_cast<std::size_t>(m.bands()));
    const std::span<std::uint8_t> tile_truth(classes.data(), pixel_count);
    generate_rows(m, rows, tile, tile_truth, threads);
    HB_TRY(scene.write_rows(rows, std::as_bytes(tile)));
    HB_TRY(truth.write_rows(rows, std::as_bytes(tile_truth)));
    if (progress) progress(rows.end, m.lines());
  }
  return {};
}

}  // namespace hb::synth
