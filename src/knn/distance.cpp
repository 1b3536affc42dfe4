#include "src/knn/distance.hpp"

#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>

namespace hb::knn {

std::optional<Metric> metric_from_name(std::string_view name) {
  if (name == "euclidean") return Metric::euclidean;
  if (name == "cosine") return Metric::cosine;
  return std::nullopt;
}

std::string_view metric_name(Metric metric) { return metric == Metric::cosine ? "cosine" : "euclidean"; }

float reported_distance(Metric metric, float ranking_distance) {
  return metric == Metric::euclidean ? std::sqrt(ranking_distance) : ranking_distance;
}

void row_norms(Metric metric, const float* rows, std::int64_t count, std::int64_t dims, float* norms) {
  for (std::int64_t r = 0; r < count; ++r) {
    const float* x = rows + r * dims;
    double sum = 0.0;
    for (std::int64_t b = 0; b < dims; ++b) sum += static_cast<double>(x[b]) * x[b];
    norms[r] = static_cast<float>(metric == Metric::euclidean ? sum : std::sqrt(sum));
  }
}

namespace {

// Squared distance accumulated in FP64 directly from the coordinates: exact zero for
// identical rows, and correctly rounded for the close pairs that decide neighbours.
float direct_squared_distance(const float* a, const float* b, std::int64_t dims) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < dims; ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    sum += d * d;
  }
  return static_cast<float>(sum);
}

}  // namespace

Status distance_block(Metric metric, const float* queries, const float* query_norms, std::int64_t nq,
                      const float* train, const float* train_norms, std::int64_t nt, std::int64_t dims,
                      float* out) {
  if (nq > INT_MAX || nt > INT_MAX || dims > INT_MAX)
    return Error{ErrorKind::internal, {}, "knn", "distance block too large for a BLAS call"};
  if (nq == 0 || nt == 0) return {};
  // out = q . t^T (row-major [nq, nt]).
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(nq), static_cast<int>(nt),
              static_cast<int>(dims), 1.0f, queries, static_cast<int>(dims), train, static_cast<int>(dims), 0.0f, out,
              static_cast<int>(nt));
  // The FP32 dot product errs by at most ~dims * eps * |q||t| <= dims * eps * (|q|^2 + |t|^2) / 2.
  const float refine_below = 2.0f * static_cast<float>(dims) * std::numeric_limits<float>::epsilon();
  for (std::int64_t q = 0; q < nq; ++q) {
    float* row = out + q * nt;
    const float qn = query_norms[q];
    if (metric == Metric::euclidean) {
      for (std::int64_t t = 0; t < nt; ++t) {
        const float norms = qn + train_norms[t];
        const float expanded = norms - 2.0f * row[t];
        // Within the expansion's rounding error of zero the value means nothing: recompute.
        row[t] = expanded > refine_below * norms ? expanded
                                                 : direct_squared_distance(queries + q * dims, train + t * dims, dims);
      }
    } else {
      for (std::int64_t t = 0; t < nt; ++t) {
        const float denominator = qn * train_norms[t];
        const float similarity = denominator > 0.0f ? row[t] / denominator : 0.0f;
        row[t] = std::clamp(1.0f - similarity, 0.0f, 2.0f);
      }
    }
  }
  return {};
}

}  // namespace hb::knn
