// Shared by the CUDA KNN tests: the device guard, the CUDA search for a method, and a
// pair-for-pair comparison of lists.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "src/backend/backend.hpp"
#include "src/knn/search.hpp"
#include "tests/src/knn/knn_search_scenarios.hpp"

#define HB_REQUIRE_GPU() \
  if (::hb::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device"

namespace hb::knn::test {

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
