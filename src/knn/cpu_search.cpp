// The CPU KnnSearch: one OpenBLAS SGEMM per (query block, training chunk), then a
// per-query selection folded into the running lists.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <vector>

#include "src/knn/search.hpp"

namespace hb::knn {
namespace {

class CpuKnnSearch final : public KnnSearch {
 public:
  explicit CpuKnnSearch(const SearchOptions& options) : options_(options), chosen_(options.select) {}

  std::string_view backend_name() const override { return "cpu"; }
  SelectMethod select_method() const override { return chosen_; }

  Status search(const float* queries, std::int64_t nq, const TrainingChunk& chunk, TopK& running) override {
    if (running.queries() < nq || running.k() < 1)
      return Error{ErrorKind::internal, {}, "knn", "running top-k lists do not match the query block"};
    if (nq == 0 || chunk.count == 0) return {};
    if (chosen_ == SelectMethod::automatic) {
      // The bounded heap wins at every k and chunk size measured (src/knn/README.md); a
      // timed pick among the methods, which give the same lists, only made the run's
      // record differ from run to run.
      chosen_ = SelectMethod::fast;
      spdlog::info("knn: k-selection on the CPU: {}", select_method_name(chosen_));
    }
    train_norms_.resize(static_cast<std::size_t>(chunk.count));
    row_norms(options_.metric, chunk.features, chunk.count, chunk.dims, train_norms_.data());
    query_norms_.resize(static_cast<std::size_t>(nq));
    row_norms(options_.metric, queries, nq, chunk.dims, query_norms_.data());

    const std::int64_t block_rows =
        std::clamp<std::int64_t>(options_.scratch_bytes / (4 * chunk.count), 1, nq);
    block_.resize(static_cast<std::size_t>(block_rows * chunk.count));
    for (std::int64_t q0 = 0; q0 < nq; q0 += block_rows) {
      const std::int64_t rows = std::min(block_rows, nq - q0);
      HB_TRY(distance_block(options_.metric, queries + q0 * chunk.dims, query_norms_.data() + q0, rows,
                            chunk.features, train_norms_.data(), chunk.count, chunk.dims, block_.data()));
      for (std::int64_t q = 0; q < rows; ++q) {
        const DistanceRow row{block_.data() + q * chunk.count, chunk.count, chunk.first_index};
        select(row, running.k(), running.worst(q0 + q));
        running.merge(q0 + q, candidates_);
      }
    }
    return {};
  }

 private:
  void select(const DistanceRow& row, int k, Neighbor bound) { run(chosen_, row, k, bound); }

  void run(SelectMethod method, const DistanceRow& row, int k, Neighbor bound) {
    switch (method) {
      case SelectMethod::kmin: select_kmin(row, k, scratch_, candidates_); break;
      case SelectMethod::bitonic: select_bitonic(row, k, scratch_, candidates_); break;
      case SelectMethod::automatic:
      case SelectMethod::tensor:  // the GPU's; the same lists as fast
      case SelectMethod::fast: select_fast(row, k, bound, scratch_, candidates_); break;
    }
  }

  SearchOptions options_;
  SelectMethod chosen_;
  std::vector<float> query_norms_;
  std::vector<float> train_norms_;
  std::vector<float> block_;
  SelectScratch scratch_;
  std::vector<Neighbor> candidates_;
};

}  // namespace

std::unique_ptr<KnnSearch> make_cpu_knn_search(const SearchOptions& options) {
  return std::make_unique<CpuKnnSearch>(options);
}

}  // namespace hb::knn
