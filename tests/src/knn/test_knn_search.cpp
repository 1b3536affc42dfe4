// The search seam against a float64 brute force: every k-selection method, with the
// training set whole or split into chunks, returns the k lexicographically smallest
// (distance, index) pairs. Integer data make FP32 distances exact, so results must
// match bit for bit, ties included; radiance-like data check the centring.
#include <gtest/gtest.h>

#include <tuple>

#include "src/knn/prepared_training.hpp"
#include "src/knn/search.hpp"
#include "tests/src/knn/knn_search_scenarios.hpp"
#include "tests/src/knn/knn_test_support.hpp"

namespace hb::knn {
namespace {

using test::brute_force;

constexpr std::int64_t kQueries = 1237;
constexpr std::int64_t kTrain = 5003;
constexpr std::int64_t kDims = 37;

struct Data {
  std::vector<float> queries = test::random_integers(kQueries, kDims, 7, 11);
  std::vector<float> train = test::random_integers(kTrain, kDims, 7, 12);
};

const Data& exact_data() {
  static const Data data;
  return data;
}

std::vector<test::Ranked> reference(const Data& data, std::int64_t nq, int k) {
  std::vector<test::Ranked> ranked;
  for (std::int64_t q = 0; q < nq; ++q)
    ranked.push_back(brute_force(data.queries.data() + q * kDims, data.train, kDims, k, test::squared_distance64));
  return ranked;
}

// Searches `nq` queries against `train` cut into chunks of `chunk_rows` (optionally
// visiting the chunks last to first: the merge must not care).
TopK run_search(SelectMethod method, Metric metric, const std::vector<float>& queries, std::int64_t nq,
                const std::vector<float>& train, std::int64_t chunk_rows, int k, bool reverse = false) {
  auto search = make_cpu_knn_search({metric, method, std::int64_t{1} << 20});
  TopK running(nq, k);
  test::search_chunks(*search, queries, nq, train, kDims, chunk_rows, running, reverse);
  return running;
}

// Fewer queries where a method's cost grows with k (kmin is O(k n) per query).
std::int64_t queries_for(SelectMethod method, int k) {
  if (method == SelectMethod::kmin && k >= 1000) return 23;
  if (method == SelectMethod::kmin && k >= 64) return 301;
  if (method == SelectMethod::bitonic) return 311;  // its cost does not depend on k
  return kQueries;
}

class ExactSearch : public ::testing::TestWithParam<std::tuple<int, SelectMethod, std::int64_t>> {};

TEST_P(ExactSearch, EqualsFloat64BruteForceBitForBit) {
  const auto [k, method, chunk_rows] = GetParam();
  const auto& data = exact_data();
  const std::int64_t nq = queries_for(method, k);
  const TopK got = run_search(method, Metric::euclidean, data.queries, nq, data.train, chunk_rows, k);
  const auto want = reference(data, nq, k);
  std::int64_t mismatches = 0;
  for (std::int64_t q = 0; q < nq; ++q) {
    const auto& ref = want[static_cast<std::size_t>(q)];
    for (int j = 0; j < k; ++j) {
      const bool same = got.indices(q)[j] == ref.index[static_cast<std::size_t>(j)] &&
                        static_cast<double>(got.distances(q)[j]) == ref.distance[static_cast<std::size_t>(j)];
      if (!same && mismatches++ < 3)
        ADD_FAILURE() << "query " << q << " rank " << j << ": got (" << got.distances(q)[j] << ", "
                      << got.indices(q)[j] << "), want (" << ref.distance[static_cast<std::size_t>(j)] << ", "
                      << ref.index[static_cast<std::size_t>(j)] << ")";
    }
  }
  EXPECT_EQ(mismatches, 0);
}

std::string exact_name(const ::testing::TestParamInfo<ExactSearch::ParamType>& info) {
  return "k" + std::to_string(std::get<0>(info.param)) + "_" +
         std::string(select_method_name(std::get<1>(info.param))) + "_chunk" + std::to_string(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Methods, ExactSearch,
                         ::testing::Combine(::testing::Values(1, 7, 64, 1000, 4096),
                                            ::testing::Values(SelectMethod::kmin, SelectMethod::bitonic,
                                                              SelectMethod::fast, SelectMethod::automatic),
                                            ::testing::Values(std::int64_t{8192}, std::int64_t{777})),
                         exact_name);

TEST(KnnSearch, EveryMethodGivesIdenticalNeighbours) {
  const auto& data = exact_data();
  for (const int k : {1, 7, 64, 1000}) {
    const std::int64_t nq = 23;
    const TopK fast = run_search(SelectMethod::fast, Metric::euclidean, data.queries, nq, data.train, 1500, k);
    for (const auto method : {SelectMethod::kmin, SelectMethod::bitonic}) {
      const TopK other = run_search(method, Metric::euclidean, data.queries, nq, data.train, 1500, k);
      for (std::int64_t q = 0; q < nq; ++q)
        for (int j = 0; j < k; ++j) {
          ASSERT_EQ(other.indices(q)[j], fast.indices(q)[j]) << select_method_name(method) << " k " << k;
          ASSERT_EQ(other.distances(q)[j], fast.distances(q)[j]);
        }
    }
  }
}

TEST(KnnSearch, ChunkOrderDoesNotMatter) {
  const auto& data = exact_data();
  const TopK forward = run_search(SelectMethod::fast, Metric::euclidean, data.queries, 200, data.train, 613, 64);
  const TopK backward = run_search(SelectMethod::bitonic, Metric::euclidean, data.queries, 200, data.train, 613, 64, true);
  for (std::int64_t q = 0; q < 200; ++q)
    for (int j = 0; j < 64; ++j) ASSERT_EQ(forward.indices(q)[j], backward.indices(q)[j]);
}

TEST(KnnSearch, AutomaticSelectionReportsItsChoice) {
  const auto& data = exact_data();
  auto search = make_cpu_knn_search({Metric::euclidean, SelectMethod::automatic, std::int64_t{1} << 20});
  EXPECT_EQ(search->select_method(), SelectMethod::automatic);
  TopK running(10, 7);
  ASSERT_TRUE(search->search(data.queries.data(), 10, {data.train.data(), kTrain, kDims, 0}, running).ok());
  EXPECT_EQ(search->select_method(), SelectMethod::fast);  // every run: the record's bytes do not vary
}

// The GPU's auto: tensor for euclidean distances from 128 features up to k = 1024, and
// up to 16 features up to k = 8 (its scan path); fast elsewhere.
TEST(KnnSearch, GpuAutomaticMethodFollowsTheShape) {
  EXPECT_EQ(gpu_automatic_method(Metric::euclidean, 224, 10), SelectMethod::tensor);
  EXPECT_EQ(gpu_automatic_method(Metric::euclidean, 128, 1024), SelectMethod::tensor);
  EXPECT_EQ(gpu_automatic_method(Metric::euclidean, 8192, 1), SelectMethod::tensor);
  EXPECT_EQ(gpu_automatic_method(Metric::euclidean, 224, 1025), SelectMethod::fast);
  EXPECT_EQ(gpu_automatic_method(Metric::euclidean, 127, 10), SelectMethod::fast);
  EXPECT_EQ(gpu_automatic_method(Metric::euclidean, 10, 5), SelectMethod::tensor);
  EXPECT_EQ(gpu_automatic_method(Metric::euclidean, 16, 8), SelectMethod::tensor);
  EXPECT_EQ(gpu_automatic_method(Metric::euclidean, 17, 5), SelectMethod::fast);
  EXPECT_EQ(gpu_automatic_method(Metric::euclidean, 10, 9), SelectMethod::fast);
  EXPECT_EQ(gpu_automatic_method(Metric::cosine, 10, 5), SelectMethod::fast);
  EXPECT_EQ(gpu_automatic_method(Metric::cosine, 224, 10), SelectMethod::fast);
}

// The scenarios every backend passes (knn_search_scenarios.hpp): ties to the lower
// index across chunks, real-valued duplicates at exactly 0, centred radiances within
// FP32 rounding of float64.
test::SearchFactory cpu_factory() {
  return [](SelectMethod method) { return make_cpu_knn_search({Metric::euclidean, method, std::int64_t{1} << 20}); };
}

TEST(KnnSearch, TiesGoToTheLowerTrainingIndex) { test::expect_ties_go_to_the_lower_index(cpu_factory(), kDims); }

TEST(KnnSearch, SequencesOverQuerySlotsEqualPlainSearches) {
  test::expect_sequences_over_query_slots_equal_plain_searches(cpu_factory(), kDims);
}

TEST(KnnSearch, GatheredTilesEqualHostQueries) {
  test::expect_gathered_tiles_equal_host_queries(cpu_factory(), kDims);
}

TEST(KnnSearch, ListedTilesEqualHostLists) { test::expect_listed_tiles_equal_host_lists(cpu_factory(), kDims); }

TEST(KnnSearch, DuplicatesOfRealValuedRowsAreAtExactlyZero) {
  test::expect_duplicates_at_exactly_zero(cpu_factory(), kDims);
}

TEST(KnnSearch, CentredRadiancesMatchFloat64WithinRounding) {
  test::expect_centred_radiances_within_rounding(cpu_factory(), SelectMethod::fast, kTrain, kDims);
}

TEST(KnnSearch, CosineMatchesFloat64AndTreatsZeroVectorsAsDistanceOne) {
  auto queries = test::random_radiances(50, kDims, 31);
  auto train = test::random_radiances(997, kDims, 32);
  std::fill_n(train.begin() + 5 * kDims, kDims, 0.0f);  // a zero training vector
  std::fill_n(queries.begin(), kDims, 0.0f);            // and a zero query
  for (const auto method : {SelectMethod::kmin, SelectMethod::bitonic, SelectMethod::fast}) {
    const TopK got = run_search(method, Metric::cosine, queries, 50, train, 300, 7);
    for (std::int64_t q = 1; q < 50; ++q) {
      const auto ref = brute_force(queries.data() + q * kDims, train, kDims, 7, test::cosine_distance64);
      for (int j = 0; j < 7; ++j) {
        const auto idx = got.indices(q)[j];
        ASSERT_NEAR(test::cosine_distance64(queries.data() + q * kDims, train.data() + idx * kDims, kDims),
                    ref.distance[static_cast<std::size_t>(j)], 1e-6);
      }
    }
    for (int j = 0; j < 7; ++j) {  // the zero query is at distance 1 from everything: lowest indices win
      EXPECT_EQ(got.distances(0)[j], 1.0f);
      EXPECT_EQ(got.indices(0)[j], j);
    }
  }
}

// What the distributed search does: each rank searches its shard, lists are merged.
TEST(KnnSearch, MergingShardListsEqualsOneSearch) {
  const auto& data = exact_data();
  const int k = 64;
  const std::int64_t nq = 100;
  const TopK whole = run_search(SelectMethod::fast, Metric::euclidean, data.queries, nq, data.train, 8192, k);
  auto search = make_cpu_knn_search({Metric::euclidean, SelectMethod::fast, std::int64_t{1} << 20});
  TopK low(nq, k), high(nq, k);
  const std::int64_t split = 2222;
  ASSERT_TRUE(search->search(data.queries.data(), nq, {data.train.data(), split, kDims, 0}, low).ok());
  ASSERT_TRUE(search->search(data.queries.data(), nq, {data.train.data() + split * kDims, kTrain - split, kDims, split}, high).ok());
  std::vector<float> d(k);
  std::vector<std::int64_t> i(k);
  for (std::int64_t q = 0; q < nq; ++q) {
    ASSERT_EQ(merge_sorted(high.distances(q), high.indices(q), k, low.distances(q), low.indices(q), k, k, d.data(), i.data()), k);
    for (int j = 0; j < k; ++j) ASSERT_EQ(i[static_cast<std::size_t>(j)], whole.indices(q)[j]);
  }
}

TEST(TopK, MergeKeepsTheKSmallestPairsLexicographically) {
  const std::vector<float> ad{1, 2, 2, 5};
  const std::vector<std::int64_t> ai{9, 4, 8, 1};
  const std::vector<float> bd{2, 3};
  const std::vector<std::int64_t> bi{6, 0};
  std::vector<float> d(5);
  std::vector<std::int64_t> i(5);
  ASSERT_EQ(merge_sorted(ad.data(), ai.data(), 4, bd.data(), bi.data(), 2, 5, d.data(), i.data()), 5);
  EXPECT_EQ(i, (std::vector<std::int64_t>{9, 4, 6, 8, 0}));
  EXPECT_EQ(d, (std::vector<float>{1, 2, 2, 2, 3}));
  EXPECT_EQ(merge_sorted(ad.data(), ai.data(), 1, bd.data(), bi.data(), 0, 3, d.data(), i.data()), 1);
}

TEST(TopK, UnfilledSlotsSortLastAndFillFromCandidates) {
  TopK running(1, 4);
  const std::vector<Neighbor> first{{2.0f, 7}, {3.0f, 1}};
  running.merge(0, first);
  EXPECT_EQ(running.indices(0)[1], 1);
  EXPECT_EQ(running.indices(0)[2], kNoIndex);
  EXPECT_EQ(running.distances(0)[3], kNoDistance);
  const std::vector<float> d{1.0f, 2.0f, 9.0f};
  const std::vector<std::int64_t> i{3, 5, 0};
  running.merge(0, d.data(), i.data(), 3);
  EXPECT_EQ(std::vector<std::int64_t>(running.indices(0), running.indices(0) + 4), (std::vector<std::int64_t>{3, 5, 7, 1}));
}

// Lists resized smaller and back keep their memory and are empty again in full. Left
// unwritten (for a search that makes its own lists), they read as empty until a search
// writes rows through rows_to_write(), and then as written.
TEST(TopK, ResizeEmptiesTheListsOrLeavesThemUnwritten) {
  TopK running(3, 2);
  const std::vector<Neighbor> seen{{1.0f, 4}, {2.0f, 5}};
  for (std::int64_t q = 0; q < 3; ++q) running.merge(q, seen);
  const auto memory = running.memory();
  running.resize(2, true);
  EXPECT_TRUE(running.unwritten());
  EXPECT_EQ(running.memory(), memory);
  const auto [distances, indices] = running.rows_to_write(1);
  EXPECT_FALSE(running.unwritten());
  EXPECT_EQ(indices[1], 5);  // the search overwrites every pair
  distances[0] = 0.5f;
  indices[0] = 9;
  EXPECT_EQ(running.indices(1)[0], 9);
  running.resize(2, true);
  EXPECT_EQ(running.indices(0)[1], kNoIndex);  // read before any write: empty
  EXPECT_EQ(running.distances(1)[0], kNoDistance);
  EXPECT_FALSE(running.unwritten());
  running.resize(3);
  EXPECT_EQ(running.memory(), memory);
  for (std::int64_t q = 0; q < 3; ++q)
    for (int j = 0; j < 2; ++j) {
      EXPECT_EQ(running.indices(q)[j], kNoIndex);
      EXPECT_EQ(running.distances(q)[j], kNoDistance);
    }
}

}  // namespace
}  // namespace hb::knn
