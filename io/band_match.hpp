// Scenes combined into one result (a campaign MNF basis, a SAM library drawn from
// several scenes) must measure the same thing in each band: the same band count,
// band centres within 0.01 nm, and the same units. Band indices alone are not enough
// (an AVIRIS-Classic scene and an AVIRIS-NG scene both have bands 0..223).
#pragma once

#include <string>
#include <vector>

#include "src/base/error.hpp"

namespace hb::io {

inline constexpr double kSameBandCentreNm = 0.01;

// Reads each scene's header or attributes (no pixels). Bad input names the first scene
// that differs and the one it differs from, with field `wavelength` (or `units`). A
// scene that cannot be opened is skipped: whatever reads it reports why.
Status check_same_bands(const std::vector<std::string>& scenes);

// The units alone (scenes resampled to one scene's bands, io/resample_view.hpp).
Status check_same_units(const std::vector<std::string>& scenes);

}  // namespace hb::io
