#include "src/knn/select.hpp"

#include <algorithm>

#include "kernels/knn/tensor_scan_limits.hpp"

namespace hb::knn {

std::optional<SelectMethod> select_method_from_name(std::string_view name) {
  if (name == "auto") return SelectMethod::automatic;
  if (name == "kmin") return SelectMethod::kmin;
  if (name == "bitonic") return SelectMethod::bitonic;
  if (name == "fast") return SelectMethod::fast;
  if (name == "tensor") return SelectMethod::tensor;
  return std::nullopt;
}

std::string_view select_method_name(SelectMethod method) {
  switch (method) {
    case SelectMethod::automatic: return "auto";
    case SelectMethod::kmin: return "kmin";
    case SelectMethod::bitonic: return "bitonic";
    case SelectMethod::fast: return "fast";
    case SelectMethod::tensor: return "tensor";
  }
  return "auto";
}

SelectMethod gpu_automatic_method(Metric metric, std::int64_t dims, int k) {
  const bool wide = dims >= kTensorAutoFromDims && k <= kTensorAutoMaxK;
  const bool scanned = dims <= kernels::knn::kTensorScanMaxDims && k <= kernels::knn::kTensorScanMaxK;
  const bool tensor_leads = metric == Metric::euclidean && (wide || scanned);
  return tensor_leads ? SelectMethod::tensor : SelectMethod::fast;
}

namespace {

void load_pairs(const DistanceRow& row, std::size_t padded, std::vector<Neighbor>& pairs) {
  pairs.resize(padded);
  for (std::int64_t j = 0; j < row.n; ++j)
    pairs[static_cast<std::size_t>(j)] = {row.distance[j], row.first_index + j};
  std::fill(pairs.begin() + row.n, pairs.end(), Neighbor{});
}

// One round of the GS_KNN network over pairs[0, live): fold the upper half onto the
// lower half, keeping the smaller of each comparator, until one candidate is left.
// Returns the position of the round's minimum (positions, not values, are folded so
// that the winner can be swapped out afterwards).
std::int64_t min_reduction(const std::vector<Neighbor>& pairs, std::int64_t live, std::vector<std::int64_t>& slots) {
  slots.resize(static_cast<std::size_t>(live));
  for (std::int64_t j = 0; j < live; ++j) slots[static_cast<std::size_t>(j)] = j;
  std::int64_t width = live;
  while (width > 1) {
    const std::int64_t half = width / 2;
    const std::int64_t upper = width - half;  // an odd element stays in the lower part
    for (std::int64_t j = 0; j < half; ++j) {
      const auto a = slots[static_cast<std::size_t>(j)];
      const auto b = slots[static_cast<std::size_t>(j + upper)];
      if (pairs[static_cast<std::size_t>(b)] < pairs[static_cast<std::size_t>(a)]) slots[static_cast<std::size_t>(j)] = b;
    }
    width = upper;
  }
  return slots[0];
}

}  // namespace

void select_kmin(const DistanceRow& row, int k, SelectScratch& scratch, std::vector<Neighbor>& out) {
  auto& pairs = scratch.pairs;
  load_pairs(row, static_cast<std::size_t>(row.n), pairs);
  const std::int64_t rounds = std::min<std::int64_t>(k, row.n);
  out.resize(static_cast<std::size_t>(rounds));
  thread_local std::vector<std::int64_t> slots;
  for (std::int64_t r = 0; r < rounds; ++r) {
    const std::int64_t live = row.n - r;
    const std::int64_t winner = min_reduction(pairs, live, slots);
    out[static_cast<std::size_t>(r)] = pairs[static_cast<std::size_t>(winner)];
    std::swap(pairs[static_cast<std::size_t>(winner)], pairs[static_cast<std::size_t>(live - 1)]);
  }
}

void select_bitonic(const DistanceRow& row, int k, SelectScratch& scratch, std::vector<Neighbor>& out) {
  std::size_t padded = 1;
  while (padded < static_cast<std::size_t>(row.n)) padded *= 2;
  auto& pairs = scratch.pairs;
  load_pairs(row, padded, pairs);
  for (std::size_t size = 2; size <= padded; size *= 2) {
    for (std::size_t stride = size / 2; stride > 0; stride /= 2) {
      for (std::size_t i = 0; i < padded; ++i) {
        const std::size_t j = i ^ stride;
        if (j <= i) continue;
        const bool ascending = (i & size) == 0;
        if (ascending ? pairs[j] < pairs[i] : pairs[i] < pairs[j]) std::swap(pairs[i], pairs[j]);
      }
    }
  }
  const auto taken = static_cast<std::size_t>(std::min<std::int64_t>(k, row.n));
  out.assign(pairs.begin(), pairs.begin() + static_cast<std::ptrdiff_t>(taken));
}

void select_fast(const DistanceRow& row, int k, Neighbor bound, SelectScratch& scratch, std::vector<Neighbor>& out) {
  auto& heap = scratch.pairs;  // max-heap: heap.front() is the worst kept pair
  heap.clear();
  const auto capacity = static_cast<std::size_t>(k);
  for (std::int64_t j = 0; j < row.n; ++j) {
    const Neighbor candidate{row.distance[j], row.first_index + j};
    if (!(candidate < bound)) continue;
    if (heap.size() < capacity) {
      heap.push_back(candidate);
      std::push_heap(heap.begin(), heap.end());
      if (heap.size() == capacity) bound = std::min(bound, heap.front());
    } else {
      std::pop_heap(heap.begin(), heap.end());
      heap.back() = candidate;
      std::push_heap(heap.begin(), heap.end());
      bound = heap.front();
    }
  }
  std::sort_heap(heap.begin(), heap.end());
  out.assign(heap.begin(), heap.end());
}

}  // namespace hb::knn
