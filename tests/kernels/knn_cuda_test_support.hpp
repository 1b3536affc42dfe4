// Shared by the CUDA KNN tests: the device guard and a driver that searches a training
// set cut into chunks (optionally visiting them last to first).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "src/backend/backend.hpp"
#include "src/knn/search.hpp"

#define HB_REQUIRE_GPU() \
  if (::hb::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device"

namespace hb::knn::test {

// Folds every chunk of `train` ([n, dims]) into `running` with `search`.
inline void search_chunks(KnnSearch& search, const std::vector<float>& queries, std::int64_t nq,
                          const std::vector<float>& train, std::int64_t dims, std::int64_t chunk_rows, TopK& running,
                          bool reverse = false) {
  const std::int64_t n = static_cast<std::int64_t>(train.size()) / dims;
  std::vector<std::int64_t> firsts;
  for (std::int64_t first = 0; first < n; first += chunk_rows) firsts.push_back(first);
  if (reverse) std::reverse(firsts.begin(), firsts.end());
  for (const auto first : firsts) {
    const TrainingChunk chunk{train.data() + first * dims, std::min(chunk_rows, n - first), dims, first};
    const Status status = search.search(queries.data(), nq, chunk, running);
    ASSERT_TRUE(status.ok()) << status.error().line();
  }
}

inline std::unique_ptr<KnnSearch> gpu_search(SelectMethod method, Metric metric = Metric::euclidean,
                                             std::int64_t device_scratch_bytes = 0) {
  SearchOptions options{metric, method, std::int64_t{1} << 20};
  options.device_scratch_bytes = device_scratch_bytes;
  auto search = make_knn_search(BackendKind::cuda, options);
  EXPECT_TRUE(search.ok()) << search.error().line();
  return search.ok() ? std::move(*search) : nullptr;
}

// Lists equal pair for pair (distances bitwise); reports the first few differences.
inline std::int64_t count_differences(const TopK& got, const TopK& want, std::int64_t nq, const char* what) {
  std::int64_t differences = 0;
  for (std::int64_t q = 0; q < nq; ++q)
    for (int j = 0; j < want.k(); ++j) {
      const bool same = got.indices(q)[j] == want.indices(q)[j] && got.distances(q)[j] == want.distances(q)[j];
      if (!same && differences++ < 3)
        ADD_FAILURE() << what << ": query " << q << " rank " << j << ": got (" << got.distances(q)[j] << ", "
                      << got.indices(q)[j] << "), want (" << want.distances(q)[j] << ", " << want.indices(q)[j] << ")";
    }
  return differences;
}

}  // namespace hb::knn::test
