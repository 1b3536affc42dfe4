#include "io/glt/map_grid.hpp"

#include <cmath>
#include <cstdlib>
#include <fmt/core.h>
#include <numbers>
#include <string_view>

namespace hb::io {
namespace {

std::string trim(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n{");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r\n}");
  return std::string(text.substr(first, last - first + 1));
}

std::vector<std::string> split_fields(const std::string& map_info) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (start <= map_info.size()) {
    const auto comma = map_info.find(',', start);
    const auto end = comma == std::string::npos ? map_info.size() : comma;
    fields.push_back(trim(std::string_view(map_info).substr(start, end - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return fields;
}

std::optional<double> number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(value)) return std::nullopt;
  return value;
}

// "rotation=ANGLE" among the trailing fields (degrees, counter-clockwise), 0 when absent.
double rotation_degrees(const std::vector<std::string>& fields) {
  for (std::size_t i = 7; i < fields.size(); ++i) {
    const auto eq = fields[i].find('=');
    if (eq == std::string::npos || trim(fields[i].substr(0, eq)) != "rotation") continue;
    if (auto value = number(trim(fields[i].substr(eq + 1)))) return *value;
  }
  return 0.0;
}

bool is_geographic(const std::string& wkt) {
  const auto start = wkt.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return false;
  const std::string_view head = std::string_view(wkt).substr(start);
  return head.starts_with("GEOGCS") || head.starts_with("GEOGCRS") || head.starts_with("GEODCRS");
}

}  // namespace

std::optional<std::vector<double>> geotransform_from_map_info(const std::string& map_info) {
  const auto fields = split_fields(map_info);
  if (fields.size() < 7) return std::nullopt;
  double v[6];
  for (int i = 0; i < 6; ++i) {
    auto value = number(fields[static_cast<std::size_t>(i) + 1]);
    if (!value) return std::nullopt;
    v[i] = *value;
  }
  const double ref_x = v[0], ref_y = v[1], easting = v[2], northing = v[3], size_x = v[4], size_y = v[5];
  const double angle = rotation_degrees(fields) * std::numbers::pi / 180.0;
  const double c = std::cos(angle), s = std::sin(angle);
  std::vector<double> gt{0, c * size_x, s * size_x, 0, s * size_y, -c * size_y};
  if (angle == 0.0) gt = {0, size_x, 0, 0, 0, -size_y};
  // The tie point (ref_x, ref_y) is 1-based: (1, 1) is the outer corner of the first pixel.
  gt[0] = easting - (ref_x - 1.0) * gt[1] - (ref_y - 1.0) * gt[2];
  gt[3] = northing - (ref_x - 1.0) * gt[4] - (ref_y - 1.0) * gt[5];
  return gt;
}

std::string map_info_from_geotransform(const std::vector<double>& gt, const std::string& wkt) {
  const double size_x = std::hypot(gt[1], gt[2]);
  const double size_y = std::hypot(gt[4], gt[5]);
  std::string rotation;
  if (gt[2] != 0.0 || gt[4] != 0.0) {
    const double degrees = std::atan2(gt[2], gt[1]) * 180.0 / std::numbers::pi;
    rotation = fmt::format(", rotation={:.15g}", degrees);
  }
  const bool geographic = is_geographic(wkt);
  return fmt::format("{}, 1, 1, {:.17g}, {:.17g}, {:.17g}, {:.17g}, {}{}", geographic ? "Geographic Lat/Lon" : "Arbitrary",
                     gt[0], gt[3], size_x, size_y, geographic ? "WGS-84, units=Degrees" : "units=Meters", rotation);
}

void complete_georeference(Metadata& meta) {
  if (meta.geotransform.empty() && !meta.map_info.empty()) {
    if (auto gt = geotransform_from_map_info(meta.map_info)) meta.geotransform = *gt;
  }
  if (meta.spatial_ref.empty()) meta.spatial_ref = meta.coordinate_system_string;
  if (meta.map_info.empty() && meta.geotransform.size() == 6)
    meta.map_info = map_info_from_geotransform(meta.geotransform, meta.spatial_ref);
  if (meta.coordinate_system_string.empty()) meta.coordinate_system_string = meta.spatial_ref;
}

}  // namespace hb::io
