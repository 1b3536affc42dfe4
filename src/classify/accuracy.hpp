// Accuracy of a class map against reference labels: confusion matrix (rows = truth,
// columns = prediction), overall accuracy, Cohen's kappa, and per class the
// producer's accuracy (recall: correct / truth count) and the user's accuracy
// (precision: correct / predicted count).
#pragma once

#include <cstdint>
#include <vector>

namespace hb::classify {

class ConfusionMatrix {
 public:
  explicit ConfusionMatrix(int classes = 0);
  int classes() const { return classes_; }
  void add(int truth, int predicted, std::int64_t count = 1);
  std::int64_t at(int truth, int predicted) const;
  std::int64_t total() const { return total_; }
  std::int64_t truth_count(int id) const;
  std::int64_t predicted_count(int id) const;

 private:
  int classes_ = 0;
  std::int64_t total_ = 0;
  std::vector<std::int64_t> counts_;  // [classes, classes]
};

struct ClassAccuracy {
  int id = 0;
  std::int64_t truth_count = 0;
  std::int64_t predicted_count = 0;
  std::int64_t correct = 0;
  double producers = 0.0;  // NaN when no truth pixel has this class
  double users = 0.0;      // NaN when no pixel was predicted as this class
};

struct AccuracySummary {
  std::int64_t total = 0;
  double overall = 0.0;  // NaN when total == 0
  double kappa = 0.0;    // NaN when chance agreement is 1 (a single class everywhere)
  std::vector<int> ids;  // classes present in truth or prediction, ascending
  std::vector<ClassAccuracy> per_class;  // same order as ids
};

AccuracySummary summarize(const ConfusionMatrix& matrix);

}  // namespace hb::classify
