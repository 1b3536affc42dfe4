#include "src/classify/class_table.hpp"

#include <algorithm>
#include <array>

#include <fmt/core.h>

namespace hb::classify {
namespace {

constexpr std::array<int, 3 * 12> kPalette{
    255, 0,   0,   0,   160, 0,   0,   0,   255, 255, 255, 0,   0,   255, 255, 255, 0,   255,
    176, 48,  96,  46,  139, 87,  160, 32,  240, 255, 127, 80,  127, 255, 212, 218, 112, 214};

}  // namespace

ClassTable complete_class_table(const ClassTable& given, int count) {
  ClassTable t = given;
  t.names.resize(static_cast<std::size_t>(std::max<int>(count, static_cast<int>(t.names.size()))));
  for (std::size_t id = 0; id < t.names.size(); ++id)
    if (t.names[id].empty()) t.names[id] = id == 0 ? "Unclassified" : fmt::format("Class {}", id);
  const std::size_t want = 3 * t.names.size();
  if (t.lookup.size() > want) t.lookup.resize(want);
  for (std::size_t i = t.lookup.size(); i < want; ++i) {
    const std::size_t id = i / 3;
    t.lookup.push_back(id == 0 ? 0 : kPalette[((id - 1) * 3 + i % 3) % kPalette.size()]);
  }
  return t;
}

io::CubeInfo product_info(const io::CubeInfo& scene, const std::string& scene_path, const std::string& description,
                          DataType type, std::int64_t bands) {
  io::CubeInfo info;
  info.shape = {scene.shape.lines, scene.shape.samples, bands};
  info.type = type;
  info.meta.map_info = scene.meta.map_info;
  info.meta.coordinate_system_string = scene.meta.coordinate_system_string;
  info.meta.description = description;
  info.meta.source_file = scene_path;
  return info;
}

io::CubeInfo class_map_info(const io::CubeInfo& scene, const std::string& scene_path, const std::string& description,
                            const ClassTable& classes) {
  auto info = product_info(scene, scene_path, description, DataType::u16, 1);
  info.meta.file_type = "ENVI Classification";
  info.meta.classes = static_cast<int>(classes.names.size());
  info.meta.class_names = classes.names;
  info.meta.class_lookup = classes.lookup;
  info.meta.band_names = {"class"};
  return info;
}

}  // namespace hb::classify
