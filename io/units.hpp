// Which numbers a command works in. A scene whose metadata carries a Scaling (ENVI
// gain/offset keys or reflectance scale factor, an AVIRIS-Classic .gain file, HDF5
// scaling attributes) is read in physical units by default: a view whose rows are
// float32 gain x stored + offset, with no-data (the ignore value, non-finite samples)
// as NaN, so that algorithms need no change. `raw` keeps the stored numbers. Scenes
// without a scaling are the cube itself in either case.
#pragma once

#include <memory>
#include <optional>
#include <string_view>

#include "io/cube.hpp"

namespace hb::io {

enum class Units { physical, raw };

std::optional<Units> units_from_name(std::string_view name);  // "physical", "raw"
const char* units_name(Units units);

// The units open_cube reads scenes in, for this process: physical unless a command's
// `--units raw` says otherwise (set once, at the command line edge, before any work).
void set_scene_units(Units units);
Units scene_units();

std::unique_ptr<Cube> with_units(std::unique_ptr<Cube> cube, Units units);

// Where a device that widens samples itself reads `cube` from. For a physical view of
// an 8- or 16-bit integer scene: the stored cube and the units that make its samples
// physical (the numbers cross the host-device link at their stored width, and the
// device applies physical_sample, with the host view's bits). Otherwise the cube itself
// and no units.
struct DeviceSource {
  const Cube& cube;
  const StoredUnits* units = nullptr;
};
DeviceSource device_source(const Cube& cube);

// The same numbers as float32, no-data (the ignore value, non-finite) as NaN: a scene
// in which pixels can be made invalid without an ignore value (io/mask.hpp).
std::unique_ptr<Cube> as_float32(std::unique_ptr<Cube> cube);

}  // namespace hb::io
