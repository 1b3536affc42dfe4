#include "src/classify/evaluation.hpp"

#include <algorithm>

namespace hb::classify {
namespace {

int top_class(std::span<const std::uint16_t> truth) {
  return truth.empty() ? -1 : *std::max_element(truth.begin(), truth.end());
}

}  // namespace

EvaluationTally::EvaluationTally(std::span<const std::uint16_t> truth, std::span<const std::int64_t> train,
                                 int class_names, std::int64_t samples, bool keep_pixels)
    : EvaluationTally(truth, 0, top_class(truth), train, class_names, samples, keep_pixels) {}

// Room for every class id in the raster.
EvaluationTally::EvaluationTally(std::span<const std::uint16_t> truth, std::int64_t first_pixel, int top_class,
                                 std::span<const std::int64_t> train, int class_names, std::int64_t samples,
                                 bool keep_pixels)
    : truth_(truth), first_pixel_(first_pixel), train_(train), samples_(samples), keep_pixels_(keep_pixels),
      matrix_(top_class < 0 ? 0 : std::max(class_names, top_class + 1)) {}

void EvaluationTally::add(RowRange rows, std::span<const std::uint16_t> labels,
                          std::span<const std::int64_t> classified) {
  if (truth_.empty() || rows.rows() == 0) return;
  const std::int64_t first = rows.begin * samples_;
  auto train = std::lower_bound(train_.begin(), train_.end(), first);
  for (const std::int64_t q : classified) {
    const std::int64_t p = first + q;
    const auto id = truth_[static_cast<std::size_t>(p - first_pixel_)];
    if (id == 0) continue;
    while (train != train_.end() && *train < p) ++train;
    if (train != train_.end() && *train == p) continue;
    matrix_.add(id, labels[static_cast<std::size_t>(q)]);
    if (keep_pixels_) pixels_.push_back(p);
  }
}

}  // namespace hb::classify
