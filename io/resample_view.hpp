// `--resample-to SCENE`: scenes seen on one target scene's bands, for a campaign basis
// that mixes sensors on purpose. Each scene is read as float32 (no-data as NaN) and
// every target band is computed from the scene's bands by the rules of
// io/resample.hpp (matched, else gaussian with the target's FWHM, else linear); the
// view carries the target's band centres, widths, names and bad-band list. A scene
// already on the target's bands (centres within 0.01 nm) is read as it is.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/cube.hpp"

namespace hb::io {

// Headers only: every scene and the target record band centres, and every good band
// of the target lies within each scene's usable bands. Bad input names the scene (or
// target) and `wavelength`.
Status check_resampling(const std::vector<std::string>& scenes, const std::string& target);

// `scene` on the bands of the cube at `target` (opened for its header).
Result<std::unique_ptr<Cube>> resampled_to(std::unique_ptr<Cube> scene, const std::string& target);

// The target open_cube resamples `scene` (by path, as given) to, for this process:
// registered at the command line edge (`--resample-to`) or by the job runner, like the
// scene units and masks. nullopt: the scene is read on its own bands.
void set_scene_band_target(const std::string& scene, std::string target);
std::optional<std::string> scene_band_target(const std::string& scene);

}  // namespace hb::io
