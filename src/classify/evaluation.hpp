// The accuracy tally of a classification: every labelled pixel that was classified and
// is not a training pixel is an evaluation pixel. Which pixels are valid is known for
// certain only once their rows are read, so the tally is kept as rows come out of the
// classification pass (no separate pass over the scene for a validity mask).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "src/base/row_range.hpp"
#include "src/classify/accuracy.hpp"

namespace hb::classify {

class EvaluationTally {
 public:
  // `train` ascending (empty when training comes from a file); `keep_pixels` keeps the
  // evaluation pixels' indices (for --export-split).
  EvaluationTally(std::span<const std::uint16_t> truth, std::span<const std::int64_t> train, int class_names,
                  std::int64_t samples, bool keep_pixels = false);
  // A rank's rows of the truth: `truth` holds the scene's pixels from `first_pixel` on
  // (the rows it classifies; none for an empty block), and `top_class` is the largest id
  // of the whole raster (-1: no truth), so that every rank's matrix has the same shape.
  EvaluationTally(std::span<const std::uint16_t> truth, std::int64_t first_pixel, int top_class,
                  std::span<const std::int64_t> train, int class_names, std::int64_t samples,
                  bool keep_pixels = false);

  // Each row once; pixels() ascend when the rows come in order. `labels`: the rows'
  // class map, raster order; `classified`: its pixels that were classified (not
  // ignored), row-local, ascending.
  void add(RowRange rows, std::span<const std::uint16_t> labels, std::span<const std::int64_t> classified);

  const ConfusionMatrix& matrix() const { return matrix_; }
  const std::vector<std::int64_t>& pixels() const { return pixels_; }

 private:
  std::span<const std::uint16_t> truth_;
  std::int64_t first_pixel_ = 0;
  std::span<const std::int64_t> train_;
  std::int64_t samples_;
  bool keep_pixels_;
  ConfusionMatrix matrix_;
  std::vector<std::int64_t> pixels_;
};

}  // namespace hb::classify
