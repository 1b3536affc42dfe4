// Where each material lies: seeded Voronoi cells on a jittered grid, their borders
// warped by smooth value noise into natural-looking field and outcrop shapes, each cell
// a class; pixels near a border mix the two materials; brightness varies smoothly
// within a class; a flightline's no-data border surrounds it all. Pure functions of
// (seed, line, sample): O(cells) memory, no state that grows with the rows generated.
#pragma once

#include <cstdint>
#include <vector>

#include "src/synth/flightline.hpp"

namespace hb::synth {

struct LayoutParams {
  double variability = 1.0;       // scale of within-class brightness variation (0 = none)
  double border_mixing_px = 1.5;  // distance over which border mixtures fade (0 = none)
};

struct PixelCover {
  bool fill = false;           // outside the flightline: no data
  int primary = 0;             // material index of the nearest cell: the truth class - 1
  int secondary = 0;           // material across the nearest border
  float secondary_weight = 0;  // linear mixture weight of `secondary`, in [0, 0.5]
  float brightness = 1;        // within-class brightness factor
};

class Layout {
 public:
  Layout(std::int64_t lines, std::int64_t samples, int classes, std::uint64_t seed, double fill_fraction,
         LayoutParams params = {});

  PixelCover at(std::int64_t line, std::int64_t sample) const;

  double cell_size_px() const { return cell_px_; }
  const FlightStrip& strip() const { return strip_; }

 private:
  struct Candidate {
    double y;
    double x;
    double distance2;
    int material;
    std::int64_t cell;
  };
  Candidate candidate(std::int64_t cell_row, std::int64_t cell_col, double y, double x) const;
  void assign_classes(int classes, std::uint64_t seed);

  FlightStrip strip_;
  LayoutParams params_;
  double cell_px_ = 32.0;
  double warp_px_ = 0.0;
  std::int64_t cell_rows_ = 0;  // interior cells (covering the scene)
  std::int64_t cell_cols_ = 0;
  std::vector<std::uint8_t> cell_material_;  // (cell_rows_ + 2 margin) x (cell_cols_ + 2 margin)
  std::uint64_t centre_key_ = 0;
  std::uint64_t cell_brightness_key_ = 0;
  std::uint64_t warp_y_key_ = 0;
  std::uint64_t warp_x_key_ = 0;
  std::uint64_t brightness_key_ = 0;
};

}  // namespace hb::synth
