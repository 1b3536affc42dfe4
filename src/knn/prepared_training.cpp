#include "src/knn/prepared_training.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "src/base/parallel_for.hpp"

namespace hb::knn {
namespace {

constexpr std::int64_t kShiftRowsPerThread = 4096;
constexpr std::int64_t kSumRowsPerBlock = 4096;
constexpr std::int64_t kReadRows = 8192;  // rows read at a time by the streaming pass

// Adds `count` rows to `sum`, blocks of them on every core: fixed-point sums are exact, so
// the bits do not depend on the split. A bad value fails with the first bad row's error.
Status add_in_parallel(FixedSum& sum, const float* rows, std::int64_t count, std::int64_t dims,
                       const std::string& source, std::int64_t first_row) {
  const std::int64_t blocks = (count + kSumRowsPerBlock - 1) / kSumRowsPerBlock;
  std::vector<FixedSum> partial(static_cast<std::size_t>(blocks), FixedSum(dims));
  std::vector<Status> status(static_cast<std::size_t>(blocks));
  parallel_for(blocks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t b = begin; b < end; ++b) {
      const std::int64_t first = b * kSumRowsPerBlock;
      const std::int64_t n = std::min(kSumRowsPerBlock, count - first);
      status[static_cast<std::size_t>(b)] =
          partial[static_cast<std::size_t>(b)].add(rows + first * dims, n, source, first_row + first);
    }
  });
  for (std::int64_t b = 0; b < blocks; ++b) {
    HB_TRY(status[static_cast<std::size_t>(b)]);
    sum.add(partial[static_cast<std::size_t>(b)]);
  }
  return {};
}

void shift_rows(float* rows, std::int64_t count, const std::vector<double>& shift) {
  const auto dims = static_cast<std::int64_t>(shift.size());
  parallel_for(count, kShiftRowsPerThread, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      for (std::int64_t b = 0; b < dims; ++b) {
        float& x = rows[r * dims + b];
        x = static_cast<float>(static_cast<double>(x) - shift[static_cast<std::size_t>(b)]);
      }
  });
}

}  // namespace

Status FixedSum::add(const float* rows, std::int64_t count, const std::string& source, std::int64_t first_row) {
  const auto dims = static_cast<std::int64_t>(hi_.size());
  constexpr double kScale = 4294967296.0;  // 2^32
  constexpr double kLimit = 2147483648.0;  // |x| < 2^31 keeps x * 2^32 in int64
  for (std::int64_t r = 0; r < count; ++r)
    for (std::int64_t b = 0; b < dims; ++b) {
      const double x = rows[r * dims + b];
      if (!std::isfinite(x))
        return bad_input(source, "features", fmt::format("row {} feature {} is not finite", first_row + r, b));
      if (std::abs(x) >= kLimit)
        return bad_input(source, "features", fmt::format("row {} feature {} is beyond +-2^31", first_row + r, b));
      add_fixed(static_cast<std::size_t>(b), static_cast<std::int64_t>(x * kScale));
    }
  return {};
}

void FixedSum::add_fixed(std::size_t b, std::int64_t v) {
  const std::uint64_t before = lo_[b];
  lo_[b] += static_cast<std::uint64_t>(v);
  // Carry of the unsigned add, and the sign extension of v into the high word.
  hi_[b] += (lo_[b] < before ? 1 : 0) + (v < 0 ? -1 : 0);
}

void FixedSum::add(const FixedSum& other) {
  for (std::size_t b = 0; b < hi_.size(); ++b) {
    const std::uint64_t before = lo_[b];
    lo_[b] += other.lo_[b];
    hi_[b] += other.hi_[b] + (lo_[b] < before ? 1 : 0);
  }
}

std::vector<double> FixedSum::mean(std::int64_t count) const {
  std::vector<double> out(hi_.size(), 0.0);
  if (count == 0) return out;
  for (std::size_t b = 0; b < hi_.size(); ++b) {
    const double total = static_cast<double>(hi_[b]) * 18446744073709551616.0 + static_cast<double>(lo_[b]);
    out[b] = total / 4294967296.0 / static_cast<double>(count);
  }
  return out;
}

Result<PreparedTraining> PreparedTraining::prepare(const classify::TrainingSource& source, Metric metric,
                                                   std::int64_t cache_bytes) {
  PreparedTraining t;
  t.source_ = &source;
  t.count_ = source.count();
  t.dims_ = source.dims();
  t.set_chunk_rows(t.count_);
  t.cached_ = t.count_ * t.dims_ * 4 <= cache_bytes;
  t.shift_.assign(static_cast<std::size_t>(t.dims_), 0.0);
  if (t.count_ == 0) return t;

  // Training mean, one streaming pass (the cached case reads everything once), summed
  // exactly in fixed point so that shards summed on any number of ranks agree bitwise.
  FixedSum sum(t.dims_);
  if (t.cached_) {
    t.rows_.resize(static_cast<std::size_t>(t.count_ * t.dims_));
    HB_TRY(source.read(0, t.count_, t.rows_.data()));
    HB_TRY(add_in_parallel(sum, t.rows_.data(), t.count_, t.dims_, source.name(), 0));
  } else {
    std::vector<float> buffer(static_cast<std::size_t>(std::min(kReadRows, t.count_) * t.dims_));
    for (std::int64_t first = 0; first < t.count_; first += kReadRows) {
      const std::int64_t rows = std::min(kReadRows, t.count_ - first);
      HB_TRY(source.read(first, rows, buffer.data()));
      HB_TRY(add_in_parallel(sum, buffer.data(), rows, t.dims_, source.name(), first));
    }
  }
  if (metric_is_shift_invariant(metric)) t.shift_ = sum.mean(t.count_);
  if (t.cached_) shift_rows(t.rows_.data(), t.count_, t.shift_);
  return t;
}

void PreparedTraining::prepare_queries(float* features, std::int64_t rows) const {
  shift_rows(features, rows, shift_);
}

Result<TrainingChunk> PreparedTraining::chunk(std::int64_t i) const {
  const std::int64_t first = i * chunk_rows_;
  const std::int64_t rows = std::min(chunk_rows_, count_ - first);
  if (cached_) return TrainingChunk{rows_.data() + first * dims_, rows, dims_, first};
  rows_.resize(static_cast<std::size_t>(chunk_rows_ * dims_));
  HB_TRY(source_->read(first, rows, rows_.data()));
  shift_rows(rows_.data(), rows, shift_);
  return TrainingChunk{rows_.data(), rows, dims_, first};
}

}  // namespace hb::knn
