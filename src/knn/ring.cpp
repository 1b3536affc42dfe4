#include "src/knn/ring.hpp"

#include <algorithm>
#include <cstring>

#include "src/base/stopwatch.hpp"

namespace hb::knn {
namespace {

constexpr int kRingTag = 7201;

// The shards a rank searches, in step order: its own first, then those coming round.
class ShardStream final : public TrainingChunks {
 public:
  ShardStream(Shard mine, std::int64_t dims, ShardMode mode, const mpi::Comm& comm)
      : comm_(comm), dims_(dims), mode_(mode) {
    const auto counts = comm.allgather(mine.count);
    const auto firsts = comm.allgather(mine.first);
    for (std::size_t r = 0; r < counts.size(); ++r) shards_.push_back({firsts[r], counts[r]});
    if (mode == ShardMode::allgather) {
      const auto all = comm.allgather_bytes(std::as_bytes(std::span<const float>(mine.rows)));
      everything_.resize(all.size() / sizeof(float));
      std::memcpy(everything_.data(), all.data(), all.size());
    } else {
      std::int64_t largest = 0;
      for (const auto& s : shards_) largest = std::max(largest, s.count);
      own_ = std::move(mine.rows);
      current_.resize(static_cast<std::size_t>(largest * dims));
      next_.resize(current_.size());
    }
  }

  int steps() const override { return mode_ == ShardMode::allgather ? 1 : comm_.size(); }

  // Completes the transfer started at the previous step, starts the next one.
  Result<TrainingChunk> at(int step) override {
    if (step > 0) {
      const Stopwatch wait;
      finish(step - 1);
      waited_ += wait.seconds();
    }
    start(step);
    return chunk(step);
  }
  void skip_from(int step) override {
    for (; step < steps(); ++step) (void)at(step);
  }
  bool ranks_in_step() const override { return mode_ == ShardMode::ring; }
  double waited_seconds() const override { return waited_; }
  std::string_view mode_name() const override { return mode_ == ShardMode::ring ? "ring" : "allgather"; }

 private:
  // Starts moving the shard for step + 1 (ring only).
  void start(int step) {
    if (mode_ == ShardMode::allgather || step + 1 >= steps()) return;
    const int size = comm_.size();
    const int rank = comm_.rank();
    const auto sent = shards_[static_cast<std::size_t>(owner(step))].count * dims_;
    const auto got = shards_[static_cast<std::size_t>(owner(step + 1))].count * dims_;
    exchange_ = mpi::Exchange(comm_, std::as_bytes(std::span<const float>(rows(step), static_cast<std::size_t>(sent))),
                              (rank + 1) % size,
                              std::as_writable_bytes(std::span<float>(next_.data(), static_cast<std::size_t>(got))),
                              (rank - 1 + size) % size, kRingTag);
  }
  // Completes the transfer started at `step` and makes its shard current.
  void finish(int step) {
    if (mode_ == ShardMode::allgather || step + 1 >= steps()) return;
    exchange_.wait();
    std::swap(current_, next_);
  }

  TrainingChunk chunk(int step) const {
    if (mode_ == ShardMode::allgather) {
      std::int64_t total = 0;
      for (const auto& s : shards_) total += s.count;
      return {everything_.data(), total, dims_, shards_.front().first};
    }
    const auto& s = shards_[static_cast<std::size_t>(owner(step))];
    return {rows(step), s.count, dims_, s.first};
  }

  struct Span {
    std::int64_t first, count;
  };
  int owner(int step) const { return (comm_.rank() - step + comm_.size()) % comm_.size(); }
  // Step 0 searches this rank's own shard, kept apart so that every query tile starts from it.
  const float* rows(int step) const { return step == 0 ? own_.data() : current_.data(); }

  const mpi::Comm& comm_;
  std::int64_t dims_;
  ShardMode mode_;
  std::vector<Span> shards_;
  std::vector<float> own_, current_, next_, everything_;
  mpi::Exchange exchange_;
  double waited_ = 0;
};

}  // namespace

ShardMode choose_shard_mode(ShardMode requested, std::int64_t training_bytes, int ranks,
                            std::int64_t allgather_max_bytes) {
  if (requested != ShardMode::automatic) return requested;
  if (ranks == 1) return ShardMode::allgather;
  return training_bytes <= allgather_max_bytes ? ShardMode::allgather : ShardMode::ring;
}

std::unique_ptr<TrainingChunks> shard_chunks(Shard mine, std::int64_t dims, ShardMode mode, const mpi::Comm& comm) {
  return std::make_unique<ShardStream>(std::move(mine), dims, mode, comm);
}

}  // namespace hb::knn
