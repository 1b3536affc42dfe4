#include "src/knn/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace hb::knn {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool usable(std::span<const std::uint16_t> truth, std::span<const std::uint8_t> valid, std::size_t p) {
  return truth[p] != 0 && (valid.empty() || valid[p] != 0);
}

std::int64_t training_count(std::int64_t class_pixels, const SplitOptions& options) {
  if (options.per_class) return std::min(*options.per_class, class_pixels);
  const auto n = static_cast<std::int64_t>(std::llround(*options.fraction * static_cast<double>(class_pixels)));
  return std::clamp<std::int64_t>(n, 1, class_pixels);
}

}  // namespace

std::uint64_t pixel_rank(std::uint64_t seed, std::int64_t pixel) {
  return splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(pixel));
}

Result<Split> stratified_split(std::span<const std::uint16_t> truth, std::span<const std::uint8_t> valid,
                               const SplitOptions& options) {
  if (options.fraction.has_value() == options.per_class.has_value())
    return Error{ErrorKind::usage, {}, "--train-fraction", "give exactly one of --train-fraction and --train-per-class"};
  if (options.fraction && !(*options.fraction > 0.0 && *options.fraction <= 1.0))
    return Error{ErrorKind::usage, {}, "--train-fraction", "must be in (0, 1]"};
  if (options.per_class && *options.per_class < 1)
    return Error{ErrorKind::usage, {}, "--train-per-class", "must be at least 1"};

  // Per class, the n pixels of smallest (rank, pixel): ordering by pixel too makes hash
  // collisions harmless. A fixed count per class keeps only a max-heap of n candidates
  // per class; a fraction needs every member first (n depends on the class size). Both
  // lists then come out in pixel order from one scan: linear in the labelled pixels.
  using Candidate = std::pair<std::uint64_t, std::int64_t>;
  std::vector<std::vector<Candidate>> by_class;
  for (std::size_t p = 0; p < truth.size(); ++p) {
    if (!usable(truth, valid, p)) continue;
    if (truth[p] >= by_class.size()) by_class.resize(truth[p] + std::size_t{1});
    auto& members = by_class[truth[p]];
    const Candidate c{pixel_rank(options.seed, static_cast<std::int64_t>(p)), static_cast<std::int64_t>(p)};
    if (!options.per_class) {
      members.push_back(c);
    } else if (static_cast<std::int64_t>(members.size()) < *options.per_class) {
      members.push_back(c);
      std::push_heap(members.begin(), members.end());
    } else if (c < members.front()) {
      std::pop_heap(members.begin(), members.end());
      members.back() = c;
      std::push_heap(members.begin(), members.end());
    }
  }
  std::vector<std::uint8_t> drawn(truth.size(), 0);
  for (auto& members : by_class) {
    if (members.empty()) continue;
    const std::int64_t n = options.per_class ? static_cast<std::int64_t>(members.size())
                                             : training_count(static_cast<std::int64_t>(members.size()), options);
    std::nth_element(members.begin(), members.begin() + (n - 1), members.end());
    for (std::int64_t i = 0; i < n; ++i) drawn[static_cast<std::size_t>(members[static_cast<std::size_t>(i)].second)] = 1;
  }
  Split split;
  for (std::size_t p = 0; p < truth.size(); ++p)
    if (usable(truth, valid, p)) (drawn[p] ? split.train : split.eval).push_back(static_cast<std::int64_t>(p));
  return split;
}

std::vector<std::int64_t> labelled_pixels(std::span<const std::uint16_t> truth, std::span<const std::uint8_t> valid) {
  std::vector<std::int64_t> pixels;
  for (std::size_t p = 0; p < truth.size(); ++p)
    if (usable(truth, valid, p)) pixels.push_back(static_cast<std::int64_t>(p));
  return pixels;
}

}  // namespace hb::knn
