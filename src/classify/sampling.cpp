#include "src/classify/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <utility>

#include "src/base/parallel_for.hpp"

namespace hb::classify {
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

constexpr std::int64_t kSplitPiece = std::int64_t{1} << 16;  // pixels, at least, per parallel piece

std::int64_t piece_count(std::int64_t pixels) {
  return std::max<std::int64_t>(1, std::min<std::int64_t>(host_threads(), pixels / kSplitPiece));
}

std::uint64_t rank_of(std::uint64_t seed, std::int64_t pixel) {
  return splitmix64(splitmix64(seed) ^ static_cast<std::uint64_t>(pixel));
}

// At most this many candidates of a class (nullopt: every member).
using Limit = std::function<std::optional<std::int64_t>(std::uint16_t)>;

// The draw's candidates among the slice's pixels [begin, end) (slice positions; the
// slice starts at scene pixel `first`), per class id: the `limit(class)` smallest
// (rank, pixel), kept in a max-heap, or every member.
std::vector<std::vector<Candidate>> candidates(std::span<const std::uint16_t> truth, std::span<const std::uint8_t> valid,
                                               std::int64_t first, std::int64_t begin, std::int64_t end,
                                               std::uint64_t seed, const Limit& limit) {
  std::vector<std::vector<Candidate>> by_class;
  std::vector<std::optional<std::int64_t>> limits;
  for (auto i = begin; i < end; ++i) {
    const auto at = static_cast<std::size_t>(i);
    if (!usable(truth, valid, at)) continue;
    if (truth[at] >= by_class.size()) {
      const auto old = by_class.size();
      by_class.resize(truth[at] + std::size_t{1});
      for (auto c = old; c < by_class.size(); ++c) limits.push_back(limit(static_cast<std::uint16_t>(c)));
    }
    auto& members = by_class[truth[at]];
    const auto& n = limits[truth[at]];
    const Candidate c{rank_of(seed, first + i), first + i};
    if (!n) {
      members.push_back(c);
    } else if (static_cast<std::int64_t>(members.size()) < *n) {
      members.push_back(c);
      std::push_heap(members.begin(), members.end());
    } else if (*n > 0 && c < members.front()) {
      std::pop_heap(members.begin(), members.end());
      members.back() = c;
      std::push_heap(members.begin(), members.end());
    }
  }
  return by_class;
}

// Every class's candidates over the slice. Pieces of it are scanned in parallel; the
// union of the pieces' candidates holds the smallest overall, so the result does not
// depend on the pieces (nor on how ranks cut the scene into slices).
std::vector<std::vector<Candidate>> all_candidates(std::span<const std::uint16_t> truth,
                                                   std::span<const std::uint8_t> valid, std::int64_t first,
                                                   std::uint64_t seed, const Limit& limit) {
  const auto pixels = static_cast<std::int64_t>(truth.size());
  const std::int64_t pieces = piece_count(pixels);
  std::vector<std::vector<std::vector<Candidate>>> found(static_cast<std::size_t>(pieces));
  parallel_for(pieces, 1, [&](std::int64_t begin, std::int64_t end) {
    for (auto i = begin; i < end; ++i)
      found[static_cast<std::size_t>(i)] =
          candidates(truth, valid, first, pixels * i / pieces, pixels * (i + 1) / pieces, seed, limit);
  });
  std::vector<std::vector<Candidate>> by_class;
  for (auto& piece : found) {
    if (piece.size() > by_class.size()) by_class.resize(piece.size());
    for (std::size_t c = 0; c < piece.size(); ++c)
      by_class[c].insert(by_class[c].end(), piece[c].begin(), piece[c].end());
  }
  return by_class;
}

Status check_options(const SplitOptions& options) {
  if (options.fraction.has_value() == options.per_class.has_value())
    return Error{ErrorKind::usage, {}, "--train-fraction", "give exactly one of --train-fraction and --train-per-class"};
  if (options.fraction && !(*options.fraction > 0.0 && *options.fraction <= 1.0))
    return Error{ErrorKind::usage, {}, "--train-fraction", "must be in (0, 1]"};
  if (options.per_class && *options.per_class < 1)
    return Error{ErrorKind::usage, {}, "--train-per-class", "must be at least 1"};
  return {};
}

}  // namespace

std::uint64_t pixel_rank(std::uint64_t seed, std::int64_t pixel) { return rank_of(seed, pixel); }

Result<Split> stratified_split(std::span<const std::uint16_t> truth, std::span<const std::uint8_t> valid,
                               const SplitOptions& options) {
  HB_TRY(check_options(options));
  // Per class, the n pixels of smallest (rank, pixel): ordering by pixel too makes hash
  // collisions harmless. With a fixed count per class each piece keeps n candidates per
  // class; a fraction needs every member (n depends on the class size).
  auto by_class = all_candidates(truth, valid, 0, options.seed, [&](std::uint16_t) { return options.per_class; });
  const auto pixels = static_cast<std::int64_t>(truth.size());
  const std::int64_t pieces = piece_count(pixels);
  const auto piece_range = [&](std::int64_t i) { return std::pair{pixels * i / pieces, pixels * (i + 1) / pieces}; };
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
  parallel_for(pieces, 1, [&](std::int64_t first, std::int64_t last) {
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
  parallel_for(pieces, 1, [&](std::int64_t first, std::int64_t last) {
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

std::vector<std::vector<Candidate>> smallest_candidates(std::span<const std::uint16_t> truth, std::int64_t first_pixel,
                                                        std::uint64_t seed, std::span<const std::int64_t> limit) {
  auto by_class = all_candidates(truth, {}, first_pixel, seed, [&](std::uint16_t c) -> std::optional<std::int64_t> {
    return c < limit.size() ? limit[c] : 0;
  });
  for (std::size_t c = 0; c < by_class.size(); ++c) keep_smallest(by_class[c], c < limit.size() ? limit[c] : 0);
  return by_class;
}

void keep_smallest(std::vector<Candidate>& members, std::int64_t limit) {
  std::sort(members.begin(), members.end());
  members.resize(std::min(members.size(), static_cast<std::size_t>(std::max<std::int64_t>(limit, 0))));
}

Result<std::vector<std::int64_t>> draw_per_class(std::span<const std::uint16_t> truth, const SplitOptions& options,
                                                 const PixelCheck& check) {
  const std::uint16_t top = truth.empty() ? 0 : *std::max_element(truth.begin(), truth.end());
  const CandidateSearch smallest = [&](std::span<const std::int64_t> limit) -> Result<CandidateLists> {
    return smallest_candidates(truth, 0, options.seed, limit);
  };
  return draw_per_class(smallest, top, options, check);
}

Result<std::vector<std::int64_t>> draw_per_class(const CandidateSearch& smallest, std::uint16_t top_class,
                                                 const SplitOptions& options, const PixelCheck& check) {
  HB_TRY(check_options(options));
  if (!options.per_class) return Error{ErrorKind::internal, {}, "--train-per-class", "draw_per_class needs a count"};
  const std::int64_t n = *options.per_class;
  // Each class's first `limit` labelled pixels in draw order are checked; a class with
  // fewer than n valid among them looks twice as far, until it runs out of pixels.
  std::vector<std::int64_t> limit(top_class + std::size_t{1}, n + n / 8 + 16);
  std::map<std::int64_t, bool> valid;  // the pixels checked so far
  std::vector<std::int64_t> train;
  for (bool again = true; again;) {
    auto by_class = smallest(limit);
    if (!by_class) return by_class.error();
    std::vector<std::int64_t> ask;
    for (const auto& members : *by_class)
      for (const auto& [rank, p] : members)
        if (!valid.contains(p)) ask.push_back(p);
    std::sort(ask.begin(), ask.end());
    if (!ask.empty()) {
      auto flags = check(ask);
      if (!flags) return flags.error();
      if (flags->size() != ask.size())
        return Error{ErrorKind::internal, {}, "--train-per-class", "the validity check answered the wrong count"};
      for (std::size_t i = 0; i < ask.size(); ++i) valid[ask[i]] = (*flags)[i] != 0;
    }
    again = false;
    train.clear();
    for (std::size_t c = 0; c < by_class->size(); ++c) {
      const auto& members = (*by_class)[c];
      std::int64_t taken = 0;
      for (auto m = members.begin(); m != members.end() && taken < n; ++m)
        if (valid.at(m->second)) {
          train.push_back(m->second);
          ++taken;
        }
      if (taken < n && static_cast<std::int64_t>(members.size()) == limit[c]) {
        limit[c] *= 2;
        again = true;
      }
    }
  }
  std::sort(train.begin(), train.end());
  return train;
}

Result<std::vector<std::int64_t>> training_pixels(std::span<const std::uint16_t> truth, const SplitOptions& options,
                                                  const PixelCheck& check, const MaskPass& mask) {
  HB_TRY(check_options(options));
  if (options.per_class) return draw_per_class(truth, options, check);
  auto valid = mask();
  if (!valid) return valid.error();
  auto split = stratified_split(truth, *valid, options);
  if (!split) return split.error();
  return std::move(split->train);
}

}  // namespace hb::classify
