// The CPU KnnSearch: one OpenBLAS SGEMM per (query block, training chunk), then a
// per-query selection folded into the running lists.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "src/knn/search.hpp"

namespace hb::knn {
namespace {

// kmin costs k passes over the row; above this k it cannot beat bitonic (measured on
// 8192-row chunks: they cross near k = 40, as GS_KNN found at k = 46), so the probe
// does not spend time on it. Numbers in src/knn/README.md.
constexpr int kProbeKminMaxK = 64;
constexpr std::int64_t kProbeRows = 8;

class CpuKnnSearch final : public KnnSearch {
 public:
  explicit CpuKnnSearch(const SearchOptions& options) : options_(options), chosen_(options.select) {}

  std::string_view backend_name() const override { return "cpu"; }
  SelectMethod select_method() const override { return chosen_; }

  Status search(const float* queries, std::int64_t nq, const TrainingChunk& chunk, TopK& running) override {
    if (running.queries() < nq || running.k() < 1)
      return Error{ErrorKind::internal, {}, "knn", "running top-k lists do not match the query block"};
    if (nq == 0 || chunk.count == 0) return {};
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
      if (chosen_ == SelectMethod::automatic) chosen_ = probe(rows, chunk, running.k());
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

  // GS_KNN's rule: time the candidates on a few real distance rows, keep the fastest.
  SelectMethod probe(std::int64_t rows, const TrainingChunk& chunk, int k) {
    std::vector<SelectMethod> methods{SelectMethod::bitonic, SelectMethod::fast};
    if (k <= kProbeKminMaxK) methods.insert(methods.begin(), SelectMethod::kmin);
    SelectMethod best = SelectMethod::fast;
    double best_seconds = 0.0;
    for (const auto method : methods) {
      const auto start = std::chrono::steady_clock::now();
      for (std::int64_t q = 0; q < std::min(rows, kProbeRows); ++q)
        run(method, {block_.data() + q * chunk.count, chunk.count, chunk.first_index}, k, Neighbor{});
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      spdlog::debug("knn select probe: {} took {:.3g} ms on {} rows of {}", select_method_name(method),
                    seconds * 1e3, std::min(rows, kProbeRows), chunk.count);
      if (method == methods.front() || seconds < best_seconds) {
        best = method;
        best_seconds = seconds;
      }
    }
    spdlog::info("knn: k-selection by timed probe: {}", select_method_name(best));
    return best;
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
