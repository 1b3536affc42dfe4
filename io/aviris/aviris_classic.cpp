#include "io/aviris/aviris_classic.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "io/aviris/aviris_parsers.hpp"
#include "io/cube_view.hpp"

namespace hb::io::aviris {
namespace {

namespace fs = std::filesystem;

constexpr std::uintmax_t kMaxCalibrationBytes = 1 << 20;  // a few KiB in practice

// The flightline's files ending in `suffix`, first by name; empty when there is none.
std::string sibling(const fs::path& data, const std::string& flightline, const std::string& suffix) {
  std::vector<std::string> found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(data.parent_path().empty() ? "." : data.parent_path(), error)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with(flightline) && name.ends_with(suffix) && entry.is_regular_file(error))
      found.push_back(entry.path().string());
  }
  std::sort(found.begin(), found.end());
  return found.empty() ? std::string() : found.front();
}

Result<std::string> read_text(const std::string& path) {
  std::error_code error;
  const auto size = fs::file_size(path, error);
  if (error) return io_error(path, "cannot stat: " + error.message());
  if (size > kMaxCalibrationBytes) return bad_input(path, "size", "too large for a calibration text file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return io_error(path, "cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Status apply_gain(const std::string& file, Metadata& meta, std::int64_t bands) {
  auto text = read_text(file);
  if (!text) return text.error();
  auto factors = parse_gain(*text, bands, file);
  if (!factors) return factors.error();
  meta.scaling.gain.clear();
  for (double factor : *factors) meta.scaling.gain.push_back(1.0 / factor);
  meta.scaling.offset.assign(factors->size(), 0.0);
  meta.scaling.units = "microwatts/cm^2/nm/sr";
  meta.scaling.source = file;
  return {};
}

Status apply_spc(const std::string& file, Metadata& meta, std::int64_t bands) {
  auto text = read_text(file);
  if (!text) return text.error();
  auto calibration = parse_spc(*text, bands, file);
  if (!calibration) return calibration.error();
  meta.wavelength = std::move(calibration->centre_nm);
  meta.fwhm = std::move(calibration->fwhm_nm);
  meta.wavelength_units = "Nanometers";
  return {};
}

}  // namespace

std::optional<std::string> flightline_of(const std::string& data_path) {
  const std::string name = fs::path(data_path).filename().string();
  // f YYMMDD t NN p NN r NN
  constexpr std::string_view kPattern = "fDDDDDDtDDpDDrDD";
  if (name.size() < kPattern.size()) return std::nullopt;
  for (std::size_t i = 0; i < kPattern.size(); ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (kPattern[i] == 'D' ? !std::isdigit(c) : name[i] != kPattern[i]) return std::nullopt;
  }
  return name.substr(0, kPattern.size());
}

Result<std::unique_ptr<Cube>> with_flightline_calibration(std::unique_ptr<Cube> cube, const std::string& data_path) {
  const auto flightline = flightline_of(data_path);
  if (!flightline) return cube;
  CubeInfo info = cube->info();
  const std::int64_t bands = info.shape.bands;
  const std::string gain = info.meta.scaling.applies() ? std::string() : sibling(data_path, *flightline, ".gain");
  const std::string spc = info.meta.wavelength.empty() ? sibling(data_path, *flightline, ".spc") : std::string();
  if (gain.empty() && spc.empty()) return cube;
  if (!gain.empty()) HB_TRY(apply_gain(gain, info.meta, bands));
  if (!spc.empty()) HB_TRY(apply_spc(spc, info.meta, bands));
  return std::unique_ptr<Cube>(std::make_unique<CubeView>(std::move(cube), std::move(info)));
}

}  // namespace hb::io::aviris
