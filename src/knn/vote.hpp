// The vote of a query's k neighbours, with scikit-learn's rules so that its
// KNeighborsClassifier is an exact oracle:
//  * uniform: one vote each; distance: weight 1/d with d the metric's distance
//    (Euclidean, not squared); when any neighbour is at d == 0, only the neighbours at
//    d == 0 vote, with weight 1 each (sklearn.neighbors._base._get_weights).
//  * the class with the largest total wins; ties go to the smallest class id
//    (sklearn takes argmax over its sorted classes_).
//  * confidence = the winner's share of the total weight.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "src/knn/distance.hpp"

namespace hb::knn {

enum class Weights { uniform, distance };

std::optional<Weights> weights_from_name(std::string_view name);  // uniform|distance
std::string_view weights_name(Weights weights);

struct VoteResult {
  std::uint16_t label = 0;
  float confidence = 0.0f;
};

class Voter {
 public:
  // labels[i]: class id of training row i (global index); ids in [1, classes).
  Voter(std::span<const std::uint16_t> labels, int classes, Metric metric, Weights weights);

  // One query: its k (ranking distance, index) pairs, ascending. Unfilled slots
  // (kNoIndex) are skipped.
  VoteResult vote(const float* distances, const std::int64_t* indices, int k);

 private:
  std::span<const std::uint16_t> labels_;
  Metric metric_;
  Weights weights_;
  std::vector<double> class_weight_;
  std::vector<double> neighbor_weight_;
};

}  // namespace hb::knn
