// AVIRIS-Classic deliveries: an ENVI radiance image named for its flightline
// (fYYMMDDtNNpNNrNN..., extensionless `_img` or `.img`, int16 DN) with the flightline's
// calibration files beside it. The .gain file gives the scaling (radiance = DN /
// factor, microwatts/cm^2/nm/sr) unless the header already scales; the .spc file gives
// band centres and FWHM when the header has none.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "io/cube.hpp"

namespace hb::io::aviris {

// "f080611t01p00r07" for ".../f080611t01p00r07rdn_c_sc01_ort_img"; nullopt otherwise.
std::optional<std::string> flightline_of(const std::string& data_path);

// `cube` with the flightline's calibration when `data_path` names one and the files
// exist; `cube` itself otherwise. A calibration file that does not fit is bad input.
Result<std::unique_ptr<Cube>> with_flightline_calibration(std::unique_ptr<Cube> cube, const std::string& data_path);

}  // namespace hb::io::aviris
