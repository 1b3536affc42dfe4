// The classes of a class map (names and colours, the same for every classifier) and the
// headers of the cubes a classifier writes beside its scene.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/cube.hpp"

namespace hb::classify {

// Class names and colours, indexed by class id (0 = unclassified).
struct ClassTable {
  std::vector<std::string> names;
  std::vector<int> lookup;  // r, g, b per class
};

// Class names and colours for `count` classes: the given ones, completed with
// "Unclassified" / "Class N" and a fixed palette (black for class 0).
ClassTable complete_class_table(const ClassTable& given, int count);

// A product cube aligned with the scene (its map info and coordinate system kept).
io::CubeInfo product_info(const io::CubeInfo& scene, const std::string& scene_path, const std::string& description,
                          DataType type, std::int64_t bands);
// The uint16 ENVI Classification cube of a class map with the given (complete) classes.
io::CubeInfo class_map_info(const io::CubeInfo& scene, const std::string& scene_path, const std::string& description,
                            const ClassTable& classes);

}  // namespace hb::classify
