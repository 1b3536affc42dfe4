#include "src/knn/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "io/parallel_for.hpp"

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

using Candidate = std::pair<std::uint64_t, std::int64_t>;  // (rank, pixel)
constexpr std::int64_t kSplitPiece = std::int64_t{1} << 16;  // pixels, at least, per parallel piece

std::uint64_t rank_of(std::uint64_t seed, std::int64_t pixel) {
  return splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(pixel));
}

// The draw's candidates among pixels [begin, end), per class id.
std::vector<std::vector<Candidate>> candidates(std::span<const std::uint16_t> truth, std::span<const std::uint8_t> valid,
                                               std::int64_t begin, std::int64_t end, const SplitOptions& options) {
  std::vector<std::vector<Candidate>> by_class;
  for (auto p = begin; p < end; ++p) {
    const auto at = static_cast<std::size_t>(p);
    if (!usable(truth, valid, at)) continue;
    if (truth[at] >= by_class.size()) by_class.resize(truth[at] + std::size_t{1});
    auto& members = by_class[truth[at]];
    const Candidate c{rank_of(options.seed, p), p};
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
  return by_class;
}

}  // namespace

std::uint64_t pixel_rank(std::uint64_t seed, std::int64_t pixel) { return rank_of(seed, pixel); }

Result<Split> stratified_split(std::span<const std::uint16_t> truth, std::span<const std::uint8_t> valid,
                               const SplitOptions& options) {
  if (options.fraction.has_value() == options.per_class.has_value())
    return Error{ErrorKind::usage, {}, "--train-fraction", "give exactly one of --train-fraction and --train-per-class"};
  if (options.fraction && !(*options.fraction > 0.0 && *options.fraction <= 1.0))
    return Error{ErrorKind::usage, {}, "--train-fraction", "must be in (0, 1]"};
  if (options.per_class && *options.per_class < 1)
    return Error{ErrorKind::usage, {}, "--train-per-class", "must be at least 1"};

  // Per class, the n pixels of smallest (rank, pixel): ordering by pixel too makes hash
  // collisions harmless. Pieces of the scene are scanned in parallel; with a fixed count
  // per class each keeps a max-heap of n candidates per class (a fraction needs every
  // member: n depends on the class size). The union of the pieces' candidates holds the
  // n smallest overall, so the draw does not depend on the pieces.
  const auto pixels = static_cast<std::int64_t>(truth.size());
  const std::int64_t pieces = std::max<std::int64_t>(1, std::min<std::int64_t>(io::host_threads(), pixels / kSplitPiece));
  const auto piece_range = [&](std::int64_t i) { return std::pair{pixels * i / pieces, pixels * (i + 1) / pieces}; };
  std::vector<std::vector<std::vector<Candidate>>> found(static_cast<std::size_t>(pieces));
  io::parallel_for(pieces, 1, [&](std::int64_t first, std::int64_t last) {
    for (auto i = first; i < last; ++i) {
      const auto [begin, end] = piece_range(i);
      found[static_cast<std::size_t>(i)] = candidates(truth, valid, begin, end, options);
    }
  });
  std::vector<std::vector<Candidate>> by_class;
  for (auto& piece : found) {
    if (piece.size() > by_class.size()) by_class.resize(piece.size());
    for (std::size_t c = 0; c < piece.size(); ++c)
      by_class[c].insert(by_class[c].end(), piece[c].begin(), piece[c].end());
  }
  std::vector<std::uint8_t> drawn(truth.size(), 0);
  for (auto& members : by_class) {
    if (members.empty()) continue;
    std::int64_t n = static_cast<std::int64_t>(members.size());
    n = options.per_class ? std::min(n, *options.per_class) : training_count(n, options);
    std::nth_element(members.begin(), members.begin() + (n - 1), members.end());
    for (std::int64_t i = 0; i < n; ++i) drawn[static_cast<std::size_t>(members[static_cast<std::size_t>(i)].second)] = 1;
  }
  // Both lists in pixel order: counted per piece, then filled in parallel.
  std::vector<std::int64_t> train_at(static_cast<std::size_t>(pieces) + 1, 0), eval_at(train_at);
  io::parallel_for(pieces, 1, [&](std::int64_t first, std::int64_t last) {
    for (auto i = first; i < last; ++i) {
      const auto [begin, end] = piece_range(i);
      for (auto p = begin; p < end; ++p)
        if (usable(truth, valid, static_cast<std::size_t>(p))) ++(drawn[static_cast<std::size_t>(p)] ? train_at : eval_at)[static_cast<std::size_t>(i) + 1];
    }
  });
  for (std::size_t i = 1; i < train_at.size(); ++i) {
    train_at[i] += train_at[i - 1];
    eval_at[i] += eval_at[i - 1];
  }
  Split split;
  split.train.resize(static_cast<std::size_t>(train_at.back()));
  split.eval.resize(static_cast<std::size_t>(eval_at.back()));
  io::parallel_for(pieces, 1, [&](std::int64_t first, std::int64_t last) {
    for (auto i = first; i < last; ++i) {
      const auto [begin, end] = piece_range(i);
      auto t = train_at[static_cast<std::size_t>(i)], e = eval_at[static_cast<std::size_t>(i)];
      for (auto p = begin; p < end; ++p)
        if (usable(truth, valid, static_cast<std::size_t>(p)))
          (drawn[static_cast<std::size_t>(p)] ? split.train[static_cast<std::size_t>(t++)] : split.eval[static_cast<std::size_t>(e++)]) = p;
    }
  });
  return split;
}

std::vector<std::int64_t> labelled_pixels(std::span<const std::uint16_t> truth, std::span<const std::uint8_t> valid) {
  std::vector<std::int64_t> pixels;
  for (std::size_t p = 0; p < truth.size(); ++p)
    if (usable(truth, valid, p)) pixels.push_back(static_cast<std::int64_t>(p));
  return pixels;
}

}  // namespace hb::knn
