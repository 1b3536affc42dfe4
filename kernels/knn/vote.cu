// The vote of each query's k neighbours (src/knn/vote.hpp: scikit-learn's rules), one
// block per query with per-class totals in shared memory.
//  * uniform: integer counts by shared-memory atomics (GS_KNN); integers add exactly,
//    so the order of the atomics cannot change a total.
//  * distance: weights 1/d are summed by one thread in neighbour order, because FP64
//    sums in another order would differ from the CPU Voter in the last bit and could
//    flip exact ties.
// The winner is the largest total among classes that received a neighbour, ties to
// the smallest class id; confidence = winner / total, as the CPU computes it.
#include <cmath>

#include "kernels/knn/detail/pair.cuh"

namespace hb::kernels::knn {
namespace {

constexpr int kThreads = 128;
constexpr int kMaxSharedBytes = 48 * 1024 - 64;  // the static counters share the 48 KiB
constexpr int kBytesPerClass = sizeof(double) + 1;  // weight, presence flag

__device__ double neighbour_weight(const VoteInputs& in, float distance, bool any_zero) {
  if (in.weights == Weights::uniform) return 1.0;
  const double d = in.metric == Metric::euclidean ? sqrt(static_cast<double>(distance)) : static_cast<double>(distance);
  if (any_zero) return d == 0.0 ? 1.0 : 0.0;
  return 1.0 / d;
}

__global__ void vote_kernel(VoteInputs in, int rows, std::uint16_t* label, float* confidence) {
  extern __shared__ double class_weight[];
  auto* present = reinterpret_cast<unsigned char*>(class_weight + in.classes);
  __shared__ unsigned int counts_total;
  __shared__ int any_zero;
  const int r = static_cast<int>(blockIdx.x);
  if (r >= rows) return;
  const float* dist = in.distance + static_cast<std::int64_t>(r) * in.k;
  const std::int64_t* idx = in.index + static_cast<std::int64_t>(r) * in.k;
  auto* counts = reinterpret_cast<unsigned int*>(class_weight);  // uniform: counts in the same space
  for (int c = static_cast<int>(threadIdx.x); c < in.classes; c += kThreads) {
    class_weight[c] = 0.0;
    present[c] = 0;
  }
  if (threadIdx.x == 0) {
    counts_total = 0;
    any_zero = 0;
  }
  __syncthreads();
  // A label outside [0, classes) or an index past the labels is skipped (never expected).
  const auto label_of = [&](int j) -> int {
    if (idx[j] == detail::kNoIndex || idx[j] < 0 || idx[j] >= in.label_count) return -1;
    const int l = in.labels[idx[j]];
    return l < in.classes ? l : -1;
  };
  double total = 0.0;
  if (in.weights == Weights::uniform) {
    for (int j = static_cast<int>(threadIdx.x); j < in.k; j += kThreads) {
      const int l = label_of(j);
      if (l < 0) continue;
      atomicAdd(&counts[l], 1u);
      atomicAdd(&counts_total, 1u);
      present[l] = 1;
    }
    __syncthreads();
    if (threadIdx.x != 0) return;
    total = static_cast<double>(counts_total);
  } else {
    for (int j = static_cast<int>(threadIdx.x); j < in.k; j += kThreads)
      if (label_of(j) >= 0 && dist[j] == 0.0f) any_zero = 1;
    __syncthreads();
    if (threadIdx.x != 0) return;
    for (int j = 0; j < in.k; ++j) {
      const int l = label_of(j);
      if (l < 0) continue;
      const double w = neighbour_weight(in, dist[j], any_zero != 0);
      class_weight[l] += w;
      total += w;
      present[l] = 1;
    }
  }
  int best_label = 0;
  double best = -1.0;
  for (int c = 0; c < in.classes; ++c) {
    const double w = in.weights == Weights::uniform ? static_cast<double>(counts[c]) : class_weight[c];
    if (present[c] && w > best) {
      best = w;
      best_label = c;
    }
  }
  label[r] = static_cast<std::uint16_t>(best_label);
  confidence[r] = total > 0.0 ? static_cast<float>(best / total) : 0.0f;
}

}  // namespace

int vote_max_classes() { return kMaxSharedBytes / kBytesPerClass; }

cudaError_t vote(const VoteInputs& in, int rows, std::uint16_t* label, float* confidence, cudaStream_t stream) {
  if (rows <= 0) return cudaSuccess;
  if (in.k < 1 || in.classes < 1 || in.classes > vote_max_classes()) return cudaErrorInvalidValue;
  const auto shared_bytes = static_cast<std::size_t>(in.classes) * kBytesPerClass;
  vote_kernel<<<static_cast<unsigned>(rows), kThreads, shared_bytes, stream>>>(in, rows, label, confidence);
  return cudaGetLastError();
}

}  // namespace hb::kernels::knn
