#include "src/knn/vote.hpp"

#include <cmath>

#include "src/knn/topk.hpp"

namespace hb::knn {

std::optional<Weights> weights_from_name(std::string_view name) {
  if (name == "uniform") return Weights::uniform;
  if (name == "distance") return Weights::distance;
  return std::nullopt;
}

std::string_view weights_name(Weights weights) { return weights == Weights::distance ? "distance" : "uniform"; }

Voter::Voter(std::span<const std::uint16_t> labels, int classes, Metric metric, Weights weights)
    : labels_(labels), metric_(metric), weights_(weights), class_weight_(static_cast<std::size_t>(classes), 0.0) {}

VoteResult Voter::vote(const float* distances, const std::int64_t* indices, int k) {
  neighbor_weight_.assign(static_cast<std::size_t>(k), 1.0);
  if (weights_ == Weights::distance) {
    bool any_zero = false;
    for (int j = 0; j < k; ++j) any_zero = any_zero || (indices[j] != kNoIndex && distances[j] == 0.0f);
    for (int j = 0; j < k; ++j) {
      const double d = metric_ == Metric::euclidean ? std::sqrt(static_cast<double>(distances[j]))
                                                    : static_cast<double>(distances[j]);
      neighbor_weight_[static_cast<std::size_t>(j)] = any_zero ? (d == 0.0 ? 1.0 : 0.0) : 1.0 / d;
    }
  }
  double total = 0.0;
  for (int j = 0; j < k; ++j) {
    if (indices[j] == kNoIndex) continue;
    const double w = neighbor_weight_[static_cast<std::size_t>(j)];
    class_weight_[labels_[static_cast<std::size_t>(indices[j])]] += w;
    total += w;
  }
  VoteResult result;
  double best = -1.0;
  for (int j = 0; j < k; ++j) {
    if (indices[j] == kNoIndex) continue;
    const std::uint16_t label = labels_[static_cast<std::size_t>(indices[j])];
    const double w = class_weight_[label];
    if (w > best || (w == best && label < result.label)) {
      best = w;
      result.label = label;
    }
  }
  for (int j = 0; j < k; ++j)
    if (indices[j] != kNoIndex) class_weight_[labels_[static_cast<std::size_t>(indices[j])]] = 0.0;
  result.confidence = total > 0.0 ? static_cast<float>(best / total) : 0.0f;
  return result;
}

}  // namespace hb::knn
