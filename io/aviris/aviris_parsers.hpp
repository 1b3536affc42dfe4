// The AVIRIS-Classic calibration files that sit beside a flightline's radiance image.
// Self-contained text parsers (no MPI, HDF5), fuzzed on their own.
//   NAME.gain: two columns per line, multiplication factor and channel number;
//              radiance (microwatts/cm^2/nm/sr) = DN / factor.
//   NAME.spc:  centre (nm), FWHM (nm), their uncertainties, channel number.
// Channels are numbered 1..bands, each exactly once, in any order. A line that breaks
// these rules, or a file with another channel count, is bad input naming the file and
// the line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/error.hpp"

namespace hb::io::aviris {

// One factor per channel, in channel order.
Result<std::vector<double>> parse_gain(std::string_view text, std::int64_t bands, const std::string& file);

struct SpectralCalibration {
  std::vector<double> centre_nm;
  std::vector<double> fwhm_nm;
};
Result<SpectralCalibration> parse_spc(std::string_view text, std::int64_t bands, const std::string& file);

}  // namespace hb::io::aviris
