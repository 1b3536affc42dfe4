#include "src/synth/flightline.hpp"

#include <algorithm>
#include <cmath>

#include "src/synth/noise.hpp"

namespace hb::synth {
namespace {

// A rectangle of length l (along the long side A) and width w rotated by theta has the
// bounding box A x B when A = l cos + w sin and B = l sin + w cos.
struct Inscribed {
  double length;
  double width;
};

Inscribed inscribed_rectangle(double along, double across, double theta) {
  const double c = std::cos(theta);
  const double s = std::sin(theta);
  const double det = c * c - s * s;
  return {(along * c - across * s) / det, (across * c - along * s) / det};
}

double area_fraction(double along, double across, double theta) {
  const Inscribed r = inscribed_rectangle(along, across, theta);
  return r.length * r.width / (along * across);
}

}  // namespace

FlightStrip::FlightStrip(std::int64_t lines, std::int64_t samples, double fill_fraction, std::uint64_t seed)
    : centre_line_(0.5 * static_cast<double>(lines)), centre_sample_(0.5 * static_cast<double>(samples)) {
  if (fill_fraction <= 0.0) return;
  has_fill_ = true;
  along_lines_ = lines >= samples;
  const double along = static_cast<double>(std::max(lines, samples));
  const double across = static_cast<double>(std::min(lines, samples));
  const double target = 1.0 - std::min(fill_fraction, 0.999);
  // The area shrinks as the heading grows; past ~3/4 of the degenerate angle the
  // rectangle becomes a sliver, so larger fill fractions narrow the strip instead.
  const double max_theta = 0.75 * std::atan(across / along);
  double theta = max_theta;
  if (area_fraction(along, across, max_theta) < target) {
    double low = 0.0;
    double high = max_theta;
    for (int i = 0; i < 60; ++i) {
      const double mid = 0.5 * (low + high);
      (area_fraction(along, across, mid) > target ? low : high) = mid;
    }
    theta = 0.5 * (low + high);
  }
  Inscribed r = inscribed_rectangle(along, across, theta);
  r.width = std::min(r.width, target * along * across / r.length);
  const bool clockwise = (hash(stream_key(seed, Stream::fill_geometry), 0) & 1u) != 0;
  heading_rad_ = clockwise ? -theta : theta;
  sin_ = std::sin(heading_rad_);
  cos_ = std::cos(heading_rad_);
  half_length_ = 0.5 * r.length;
  half_width_ = 0.5 * r.width;
  valid_fraction_ = r.length * r.width / (along * across);
}

bool FlightStrip::contains(std::int64_t line, std::int64_t sample) const {
  if (!has_fill_) return true;
  const double dy = static_cast<double>(line) + 0.5 - centre_line_;
  const double dx = static_cast<double>(sample) + 0.5 - centre_sample_;
  const double a = along_lines_ ? dy : dx;  // along the long side
  const double b = along_lines_ ? dx : dy;
  const double u = a * cos_ + b * sin_;
  const double v = b * cos_ - a * sin_;
  return std::abs(u) <= half_length_ && std::abs(v) <= half_width_;
}

}  // namespace hb::synth
