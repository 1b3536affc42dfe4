// Votes of a block of queries at once: the seam through which the CUDA backend counts
// votes on the GPU (kernels/knn/vote.cu) while the CPU loops the Voter. Both follow
// vote.hpp's rules and give identical labels and confidences.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

#include "src/base/error.hpp"
#include "src/knn/topk.hpp"
#include "src/knn/vote.hpp"

namespace hb::knn {

struct VoteRule {
  std::span<const std::uint16_t> labels;  // class id of every training row (global index)
  int classes = 0;                        // ids in [0, classes)
  Metric metric = Metric::euclidean;
  Weights weights = Weights::uniform;
};

class BatchVoter {
 public:
  virtual ~BatchVoter() = default;
  virtual std::string_view backend_name() const = 0;
  // out[q] for the first nq lists of `lists`.
  virtual Status vote(const TopK& lists, std::int64_t nq, std::span<VoteResult> out) = 0;
};

std::unique_ptr<BatchVoter> make_cpu_batch_voter(const VoteRule& rule);

// The voter that goes with a search backend ("cpu" or "cuda"); the CUDA voter needs the
// class totals in shared memory and falls back to the CPU beyond that many classes.
Result<std::unique_ptr<BatchVoter>> make_batch_voter(std::string_view backend, const VoteRule& rule);

}  // namespace hb::knn
