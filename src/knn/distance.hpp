// Distances of a block of queries to a block of training rows with one GEMM (GS_KNN
// section 3.1): squared Euclidean as |q|^2 + |t|^2 - 2 q.t, cosine as 1 - q.t/(|q||t|).
// FP32 with norms accumulated in FP64. The caller centres both sides on the training
// mean for Euclidean distances: the expansion cancels badly on raw radiances (values
// in the thousands), and centring does not change Euclidean distances. Cosine
// distances are not shift-invariant, so cosine data are used as they are.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "src/base/error.hpp"

namespace hb::knn {

enum class Metric { euclidean, cosine };

std::optional<Metric> metric_from_name(std::string_view name);  // euclidean|cosine
std::string_view metric_name(Metric metric);

// Whether the metric is unchanged when both sides are shifted by the same vector.
inline bool metric_is_shift_invariant(Metric metric) { return metric == Metric::euclidean; }

// The ranking distance kept in top-k lists (squared for Euclidean) to the distance a
// person expects (Euclidean, as scikit-learn reports and weights it).
float reported_distance(Metric metric, float ranking_distance);

// What the GEMM expansion needs per row: |x|^2 for Euclidean, |x| for cosine.
void row_norms(Metric metric, const float* rows, std::int64_t count, std::int64_t dims, float* norms);

// out[q * nt + t] = distance(query q, training row t) for row-major [nq, dims] queries
// and [nt, dims] training rows. A squared Euclidean distance that the expansion puts
// within its own rounding error of zero (below 2 * dims * FLT_EPSILON * (|q|^2 + |t|^2))
// is recomputed directly as sum((q - t)^2) in FP64: duplicates come out exactly 0
// (scikit-learn's zero-distance vote depends on it) and never negative. Cosine
// distances are clamped to [0, 2], and a zero vector is at distance 1 from everything
// (scikit-learn's convention).
Status distance_block(Metric metric, const float* queries, const float* query_norms, std::int64_t nq,
                      const float* train, const float* train_norms, std::int64_t nt, std::int64_t dims,
                      float* out);

}  // namespace hb::knn
