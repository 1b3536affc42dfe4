#include "src/knn/evaluation.hpp"

#include <algorithm>

namespace hb::knn {
namespace {

// Room for every class id in the raster, so that every rank's matrix has the same shape.
int matrix_size(std::span<const std::uint16_t> truth, int class_names) {
  const int top = truth.empty() ? 0 : *std::max_element(truth.begin(), truth.end());
  return std::max(class_names, top + 1);
}

}  // namespace

EvaluationTally::EvaluationTally(std::span<const std::uint16_t> truth, std::span<const std::int64_t> train,
                                 int class_names, std::int64_t samples, bool keep_pixels)
    : truth_(truth), train_(train), samples_(samples), keep_pixels_(keep_pixels),
      matrix_(truth.empty() ? 0 : matrix_size(truth, class_names)) {}

void EvaluationTally::add(const ClassifiedRows& rows) {
  if (truth_.empty() || rows.rows.rows() == 0) return;
  const std::int64_t first = rows.rows.begin * samples_;
  auto train = std::lower_bound(train_.begin(), train_.end(), first);
  for (const std::int64_t q : rows.classified) {
    const std::int64_t p = first + q;
    const auto id = truth_[static_cast<std::size_t>(p)];
    if (id == 0) continue;
    while (train != train_.end() && *train < p) ++train;
    if (train != train_.end() && *train == p) continue;
    matrix_.add(id, rows.labels[static_cast<std::size_t>(q)]);
    if (keep_pixels_) pixels_.push_back(p);
  }
}

}  // namespace hb::knn
