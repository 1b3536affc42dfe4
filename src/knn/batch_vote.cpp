#include "src/knn/batch_vote.hpp"

#ifdef HB_HAVE_CUDA
#include "src/knn/cuda_search.hpp"
#endif

namespace hb::knn {
namespace {

class CpuBatchVoter final : public BatchVoter {
 public:
  explicit CpuBatchVoter(const VoteRule& rule) : voter_(rule.labels, rule.classes, rule.metric, rule.weights) {}
  std::string_view backend_name() const override { return "cpu"; }
  Status vote(const TopK& lists, std::int64_t nq, std::span<VoteResult> out) override {
    if (nq > lists.queries() || static_cast<std::int64_t>(out.size()) < nq)
      return Error{ErrorKind::internal, {}, "knn", "vote outputs do not match the lists"};
    for (std::int64_t q = 0; q < nq; ++q)
      out[static_cast<std::size_t>(q)] = voter_.vote(lists.distances(q), lists.indices(q), lists.k());
    return {};
  }

 private:
  Voter voter_;
};

}  // namespace

std::unique_ptr<BatchVoter> make_cpu_batch_voter(const VoteRule& rule) { return std::make_unique<CpuBatchVoter>(rule); }

Result<std::unique_ptr<BatchVoter>> make_batch_voter(std::string_view backend, const VoteRule& rule) {
#ifdef HB_HAVE_CUDA
  if (backend == "cuda" && rule.classes <= cuda_vote_max_classes()) return make_cuda_batch_voter(rule);
#else
  (void)backend;
#endif
  return make_cpu_batch_voter(rule);
}

}  // namespace hb::knn
