// The no-data border of an orthorectified flightline: the valid data are a rectangle
// rotated by a small heading angle inside its bounding box (the scene grid); the
// corners outside it are fill. The geometry is solved so that a chosen fraction of
// the scene area is fill.
#pragma once

#include <cstdint>

namespace hb::synth {

class FlightStrip {
 public:
  FlightStrip() = default;  // no fill: every pixel is valid
  // `fill_fraction` in [0, 1); the heading's sign comes from the seed.
  FlightStrip(std::int64_t lines, std::int64_t samples, double fill_fraction, std::uint64_t seed);

  // Whether the pixel (line, sample) has data: its centre lies inside the strip.
  bool contains(std::int64_t line, std::int64_t sample) const;

  double valid_area_fraction() const { return valid_fraction_; }
  double heading_rad() const { return heading_rad_; }

 private:
  bool has_fill_ = false;
  bool along_lines_ = true;  // the strip's long axis follows the longer scene side
  double centre_line_ = 0.0;
  double centre_sample_ = 0.0;
  double sin_ = 0.0;
  double cos_ = 1.0;
  double half_length_ = 0.0;
  double half_width_ = 0.0;
  double heading_rad_ = 0.0;
  double valid_fraction_ = 1.0;
};

}  // namespace hb::synth
