#include "src/classify/accuracy.hpp"

#include <limits>

namespace hb::classify {

ConfusionMatrix::ConfusionMatrix(int classes)
    : classes_(classes), counts_(static_cast<std::size_t>(classes) * static_cast<std::size_t>(classes), 0) {}

void ConfusionMatrix::add(int truth, int predicted, std::int64_t count) {
  counts_[static_cast<std::size_t>(truth) * static_cast<std::size_t>(classes_) + static_cast<std::size_t>(predicted)] +=
      count;
  total_ += count;
}

std::int64_t ConfusionMatrix::at(int truth, int predicted) const {
  return counts_[static_cast<std::size_t>(truth) * static_cast<std::size_t>(classes_) +
                 static_cast<std::size_t>(predicted)];
}

std::int64_t ConfusionMatrix::truth_count(int id) const {
  std::int64_t sum = 0;
  for (int p = 0; p < classes_; ++p) sum += at(id, p);
  return sum;
}

std::int64_t ConfusionMatrix::predicted_count(int id) const {
  std::int64_t sum = 0;
  for (int t = 0; t < classes_; ++t) sum += at(t, id);
  return sum;
}

AccuracySummary summarize(const ConfusionMatrix& matrix) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  AccuracySummary s;
  s.total = matrix.total();
  const auto n = static_cast<double>(s.total);
  std::int64_t correct = 0;
  double chance = 0.0;  // sum over classes of truth share x predicted share
  for (int id = 0; id < matrix.classes(); ++id) {
    ClassAccuracy c{id, matrix.truth_count(id), matrix.predicted_count(id), matrix.at(id, id), nan, nan};
    if (c.truth_count == 0 && c.predicted_count == 0) continue;
    if (c.truth_count > 0) c.producers = static_cast<double>(c.correct) / static_cast<double>(c.truth_count);
    if (c.predicted_count > 0) c.users = static_cast<double>(c.correct) / static_cast<double>(c.predicted_count);
    correct += c.correct;
    chance += (static_cast<double>(c.truth_count) / n) * (static_cast<double>(c.predicted_count) / n);
    s.ids.push_back(id);
    s.per_class.push_back(c);
  }
  if (s.total == 0) {
    s.overall = s.kappa = nan;
    return s;
  }
  s.overall = static_cast<double>(correct) / n;
  s.kappa = chance < 1.0 ? (s.overall - chance) / (1.0 - chance) : nan;
  return s;
}

}  // namespace hb::classify
