// Device helpers shared by the SAM kernels: the pixel norm with the ignore rule, the
// running best match (ties to the lowest index), the reported score.
#pragma once

#include <cmath>
#include <limits>

#include "kernels/sam/sam.cuh"

namespace hb::kernels::sam::detail {

// n(x) over the compared bands, 0 when a band is non-finite or the ignore value
// (compared in float32, as the CPU does) or when the norm vanishes.
template <class Sample>
__device__ __forceinline__ double pixel_norm(Sample sample, const PixelRule& rule) {
  double sum = 0, squares = 0;
  bool ok = true;
  for (int k = 0; k < rule.dims; ++k) {
    const double v = sample(k);
    const auto narrow = static_cast<float>(v);
    ok = ok && isfinite(narrow) && !(rule.has_ignore && narrow == rule.ignore);
    sum += v;
    squares = fma(v, v, squares);
  }
  const double n2 = rule.centred ? squares - sum * sum / rule.dims : squares;
  return ok && n2 > 0 ? sqrt(n2) : 0.0;
}

__device__ __forceinline__ float reported(double similarity, bool angles) {
  return static_cast<float>(angles ? acos(fmin(1.0, fmax(-1.0, similarity))) : similarity);
}

struct Best {
  double similarity = -std::numeric_limits<double>::infinity();
  int index = 0;
  __device__ void offer(double s, int r) {
    if (s > similarity || (s == similarity && r < index)) {
      similarity = s;
      index = r;
    }
  }
};

__device__ __forceinline__ void mark_ignored(std::int64_t p, const ScoreOutputs& out) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  out.best[p] = -1;
  out.best_score[p] = nan;
  if (out.scores)
    for (int r = 0; r < out.count; ++r) out.scores[p * out.count + r] = nan;
}

}  // namespace hb::kernels::sam::detail
