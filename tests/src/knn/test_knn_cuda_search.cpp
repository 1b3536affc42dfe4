// The CUDA KnnSearch against a float64 brute force and against the CPU search. Integer
// data keep FP32 GEMM distances exact, so every comparison is bit for bit, ties
// included: every --select method, k in {1, 7, 64, 1000, 4096}, query and training
// counts that are no multiple of any tile (1237 queries, 5003 rows; 3001 queries over
// 20011 rows span several fused sub-blocks and slabs, whose sizes follow the GPU's
// occupancy; k <= 32 takes the warp path, 64, 1000 and 4096 the pool flush, 10000 the
// merge flush), training sets cut into chunks, lists
// carried over from the CPU, tiny device budgets that force streamed chunks and many
// query blocks, hundreds of rows tied at the k-th distance, pinned host lists that come
// home slab by slab, data far from the origin (the scans' screen against rounding).
// Skips without a GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <tuple>

#include "kernels/knn/knn.cuh"
#include "tests/src/knn/knn_cuda_test_support.hpp"
#include "tests/src/knn/knn_search_scenarios.hpp"
#include "tests/src/knn/knn_test_support.hpp"

namespace hb::knn {
namespace {

using test::count_differences;
using test::gpu_search;
using test::search_chunks;

constexpr std::int64_t kQueries = 1237;
constexpr std::int64_t kTrain = 5003;
constexpr std::int64_t kDims = 37;
constexpr int kMaxK = 4096;

// The data and, per query, its kMaxK smallest (float64 distance, index) pairs as a TopK.
struct Exact {
  std::vector<float> queries = test::random_integers(kQueries, kDims, 7, 41);
  std::vector<float> train = test::random_integers(kTrain, kDims, 7, 42);
  TopK reference{kQueries, kMaxK};

  Exact() {
    std::vector<std::pair<double, std::int64_t>> all(static_cast<std::size_t>(kTrain));
    for (std::int64_t q = 0; q < kQueries; ++q) {
      for (std::int64_t t = 0; t < kTrain; ++t)
        all[static_cast<std::size_t>(t)] = {
            test::squared_distance64(queries.data() + q * kDims, train.data() + t * kDims, kDims), t};
      std::partial_sort(all.begin(), all.begin() + kMaxK, all.end());
      for (int j = 0; j < kMaxK; ++j) {
        reference.distances(q)[j] = static_cast<float>(all[static_cast<std::size_t>(j)].first);  // exact integers
        reference.indices(q)[j] = all[static_cast<std::size_t>(j)].second;
      }
    }
  }

  // The first k columns of the reference.
  TopK reference_for(int k) const {
    TopK out(kQueries, k);
    for (std::int64_t q = 0; q < kQueries; ++q) {
      std::copy_n(reference.distances(q), k, out.distances(q));
      std::copy_n(reference.indices(q), k, out.indices(q));
    }
    return out;
  }
};

const Exact& exact() {
  static const Exact data;
  return data;
}

// What every GPU method must return bit for bit: the CPU search of all `rows` at once.
TopK cpu_lists(const std::vector<float>& queries, std::int64_t nq, const std::vector<float>& train, std::int64_t rows,
               std::int64_t dims, int k) {
  auto cpu = make_cpu_knn_search({Metric::euclidean, SelectMethod::fast, std::int64_t{16} << 20});
  TopK want(nq, k);
  EXPECT_TRUE(cpu->search(queries.data(), nq, {train.data(), rows, dims, 0}, want).ok());
  return want;
}

class CudaExactSearch : public ::testing::TestWithParam<std::tuple<int, SelectMethod, std::int64_t>> {};

TEST_P(CudaExactSearch, EqualsFloat64BruteForceBitForBit) {
  HB_REQUIRE_GPU();
  const auto [k, method, chunk_rows] = GetParam();
  const auto& data = exact();
  auto search = gpu_search(method);
  ASSERT_TRUE(search);
  TopK got(kQueries, k);
  search_chunks(*search, data.queries, kQueries, data.train, kDims, chunk_rows, got);
  EXPECT_EQ(count_differences(got, data.reference_for(k), kQueries, "gpu vs float64"), 0);
  EXPECT_NE(search->select_method(), SelectMethod::automatic);
  if (method != SelectMethod::automatic) {
    EXPECT_EQ(search->select_method(), method);
  }
}

std::string exact_name(const ::testing::TestParamInfo<CudaExactSearch::ParamType>& info) {
  return "k" + std::to_string(std::get<0>(info.param)) + "_" +
         std::string(select_method_name(std::get<1>(info.param))) + "_chunk" + std::to_string(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Methods, CudaExactSearch,
                         ::testing::Combine(::testing::Values(1, 7, 64, 1000, 4096),
                                            ::testing::Values(SelectMethod::kmin, SelectMethod::bitonic,
                                                              SelectMethod::fast, SelectMethod::tensor,
                                                              SelectMethod::automatic),
                                            ::testing::Values(std::int64_t{8192}, std::int64_t{777})),
                         exact_name);

// A small device budget: chunks are streamed (not cached) and queries go in many blocks.
TEST(CudaKnnSearch, SmallDeviceBudgetStreamsChunksAndQueryBlocks) {
  HB_REQUIRE_GPU();
  const auto& data = exact();
  for (const auto method : {SelectMethod::kmin, SelectMethod::bitonic, SelectMethod::fast})
    for (const int k : {7, 300}) {
      auto search = gpu_search(method, Metric::euclidean, std::int64_t{256} << 10);
      ASSERT_TRUE(search);
      TopK got(kQueries, k);
      search_chunks(*search, data.queries, kQueries, data.train, kDims, 2000, got, true);
      EXPECT_EQ(count_differences(got, data.reference_for(k), kQueries, select_method_name(method).data()), 0)
          << "k " << k;
    }
}

// Lists started on the CPU and finished on the GPU (and the other way round): the
// uploaded running lists are merged like the device's own.
TEST(CudaKnnSearch, ContinuesListsStartedOnTheCpu) {
  HB_REQUIRE_GPU();
  const auto& data = exact();
  const int k = 64;
  const std::int64_t split = 2500;
  const std::vector<float> low(data.train.begin(), data.train.begin() + split * kDims);
  for (const auto method : {SelectMethod::kmin, SelectMethod::bitonic, SelectMethod::fast}) {
    auto cpu = make_cpu_knn_search({Metric::euclidean, SelectMethod::fast, std::int64_t{1} << 20});
    auto gpu = gpu_search(method);
    ASSERT_TRUE(gpu);
    TopK got(kQueries, k);
    ASSERT_TRUE(cpu->search(data.queries.data(), kQueries, {data.train.data() + split * kDims, kTrain - split, kDims, split}, got).ok());
    search_chunks(*gpu, data.queries, kQueries, low, kDims, 999, got);
    EXPECT_EQ(count_differences(got, data.reference_for(k), kQueries, select_method_name(method).data()), 0);
  }
}

// Chunks larger than one fused slab (8192 columns), and k beyond 4096 and beyond what
// the bitonic buffer holds: every method equals the CPU search bit for bit.
TEST(CudaKnnSearch, LargeChunksAndLargeKEqualTheCpu) {
  HB_REQUIRE_GPU();
  constexpr std::int64_t kBigTrain = 20011, kBigDims = 16, kBigQueries = 300;
  const auto queries = test::random_integers(kBigQueries, kBigDims, 9, 51);
  const auto train = test::random_integers(kBigTrain, kBigDims, 9, 52);
  for (const int k : {1, 100, 2500, 10000}) {
    const std::int64_t nq = k > 4096 ? 40 : kBigQueries;
    const TopK want = cpu_lists(queries, nq, train, kBigTrain, kBigDims, k);
    for (const auto method : {SelectMethod::kmin, SelectMethod::bitonic, SelectMethod::fast})
      for (const std::int64_t chunk_rows : {kBigTrain, std::int64_t{9000}}) {
        auto search = gpu_search(method);
        ASSERT_TRUE(search);
        TopK got(nq, k);
        if (method == SelectMethod::bitonic && k > 8192) {  // beyond the shared-memory buffer: a clear refusal
          const Status status = search->search(queries.data(), nq, {train.data(), kBigTrain, kBigDims, 0}, got);
          ASSERT_FALSE(status.ok());
          EXPECT_EQ(status.error().kind, ErrorKind::usage);
          continue;
        }
        search_chunks(*search, queries, nq, train, kBigDims, chunk_rows, got);
        const std::string what = std::string(select_method_name(method)) + " k " + std::to_string(k) + " chunk " +
                                 std::to_string(chunk_rows);
        EXPECT_EQ(count_differences(got, want, nq, what.c_str()), 0);
      }
  }
}

// Many queries over many training rows: the fast path's query sub-blocks (eight waves of
// the block kernel, 4224 rows on an H200; with a 32 MiB device budget, 2048 rows on
// either path) and slabs both repeat, with ragged last ones.
TEST(CudaKnnSearch, ManyFusedSubBlocksAndSlabsEqualTheCpu) {
  HB_REQUIRE_GPU();
  constexpr std::int64_t kManyQueries = 9001, kBigTrain = 20011, kBigDims = 8;
  const auto queries = test::random_integers(kManyQueries, kBigDims, 5, 71);
  const auto train = test::random_integers(kBigTrain, kBigDims, 5, 72);
  for (const int k : {1, 32, 100, 1000}) {  // warp path (1, 32), pool (100, 1000)
    const TopK want = cpu_lists(queries, kManyQueries, train, kBigTrain, kBigDims, k);
    for (const std::int64_t budget : {std::int64_t{0}, std::int64_t{32} << 20}) {
      auto search = gpu_search(SelectMethod::fast, Metric::euclidean, budget);
      ASSERT_TRUE(search);
      TopK got(kManyQueries, k);
      search_chunks(*search, queries, kManyQueries, train, kBigDims, kBigTrain, got);
      EXPECT_EQ(count_differences(got, want, kManyQueries, "fast"), 0) << "k " << k << " budget " << budget;
    }
  }
}

// Lists in the search's own list memory (pinned, as the scene passes make them) come
// home slab by slab on a copy stream while later slabs are searched: the same lists as
// pageable ones, for the warp path and the pool, over several slabs of query rows and
// (with a 32 MiB budget) several query blocks.
TEST(CudaKnnSearch, PinnedListsComeHomeSlabBySlab) {
  HB_REQUIRE_GPU();
  constexpr std::int64_t kManyQueries = 9001, kBigTrain = 20011, kBigDims = 8;
  const auto queries = test::random_integers(kManyQueries, kBigDims, 5, 73);
  const auto train = test::random_integers(kBigTrain, kBigDims, 5, 74);
  for (const int k : {10, 300})
    for (const std::int64_t budget : {std::int64_t{0}, std::int64_t{32} << 20}) {
      auto search = gpu_search(SelectMethod::fast, Metric::euclidean, budget);
      ASSERT_TRUE(search);
      TopK want(kManyQueries, k), got(kManyQueries, k, search->list_memory());
      for (const void* list : {static_cast<const void*>(got.distances(0)), static_cast<const void*>(got.indices(0))}) {
        cudaPointerAttributes where{};
        ASSERT_EQ(cudaPointerGetAttributes(&where, list), cudaSuccess);
        ASSERT_EQ(where.type, cudaMemoryTypeHost) << "list memory is not pinned";
      }
      search_chunks(*search, queries, kManyQueries, train, kBigDims, kBigTrain, want);
      search_chunks(*search, queries, kManyQueries, train, kBigDims, kBigTrain, got);
      EXPECT_EQ(count_differences(got, want, kManyQueries, "pinned"), 0) << "k " << k << " budget " << budget;
    }
}

// Hundreds of training rows at exactly the k-th distance: the lower indices win, across
// slabs, chunks and chunk orders, in the warp path (a ballot re-tested after every
// insertion) and in the pool flush (a radix select on the distance, then the index).
TEST(CudaKnnSearch, FastKeepsTheLowerIndicesOfATiedKthDistance) {
  HB_REQUIRE_GPU();
  constexpr std::int64_t kRows = 20011, kTiedDims = 8, kTiedQueries = 64, kDistinct = 23;
  const auto distinct = test::random_integers(kDistinct, kTiedDims, 5, 81);
  std::vector<float> train(static_cast<std::size_t>(kRows * kTiedDims));
  for (std::int64_t t = 0; t < kRows; ++t)
    std::copy_n(distinct.begin() + (t * 7919 % kDistinct) * kTiedDims, kTiedDims, train.begin() + t * kTiedDims);
  const auto queries = test::random_integers(kTiedQueries, kTiedDims, 5, 82);
  for (const int k : {10, 32, 33, 128, 1000, 2048}) {  // the warp path up to 32, the pool from 33
    const TopK want = cpu_lists(queries, kTiedQueries, train, kRows, kTiedDims, k);
    for (const std::int64_t chunk_rows : {kRows, std::int64_t{9000}})
      for (const bool reverse : {false, true}) {
        auto search = gpu_search(SelectMethod::fast);
        ASSERT_TRUE(search);
        TopK got(kTiedQueries, k);
        search_chunks(*search, queries, kTiedQueries, train, kTiedDims, chunk_rows, got, reverse);
        EXPECT_EQ(count_differences(got, want, kTiedQueries, "fast"), 0)
            << "k " << k << " chunk " << chunk_rows << " reverse " << reverse;
      }
  }
}

// The screen's bound on training norms: the largest of any count, NaN when one is NaN.
TEST(CudaKnnSearch, LargestNormIsTheMaximumOrNaN) {
  HB_REQUIRE_GPU();
  std::vector<float> norms(100003);
  for (std::size_t r = 0; r < norms.size(); ++r) norms[r] = static_cast<float>(r % 977) * 0.25f;
  norms[54321] = 3.0e30f;
  float* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, (norms.size() + 1) * sizeof(float)), cudaSuccess);
  const auto largest = [&](int count) {
    float got = -1.0f;
    EXPECT_EQ(cudaMemcpy(device, norms.data(), norms.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(kernels::knn::largest_norm(device, count, device + norms.size(), nullptr), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(&got, device + norms.size(), sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return got;
  };
  EXPECT_EQ(largest(static_cast<int>(norms.size())), 3.0e30f);
  EXPECT_EQ(largest(1000), 976 * 0.25f);
  EXPECT_EQ(largest(0), 0.0f);
  norms[99999] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(largest(static_cast<int>(norms.size()))));
  cudaFree(device);
}

// Integers far from the origin (1000 + 0..7 in 16 bands): the expansion cancels (norms
// near 1.6e7, distances below 800), so sums of norms are rounded and the closest pairs
// recomputed in FP64. The fast path's scans screen pairs with one FMA before finishing
// them (detail::RowFinisher); the screen must pass every pair the exact test keeps:
// every method equals the CPU bit for bit, on the warp path and both flushes, with lists
// that arrive full at a second chunk.
TEST(CudaKnnSearch, FarFromTheOriginEveryMethodEqualsTheCpu) {
  HB_REQUIRE_GPU();
  constexpr std::int64_t kFarQueries = 500, kFarTrain = 12007, kFarDims = 16;
  auto queries = test::random_integers(kFarQueries, kFarDims, 7, 91);
  auto train = test::random_integers(kFarTrain, kFarDims, 7, 92);
  for (auto* values : {&queries, &train})
    for (float& x : *values) x += 1000.0f;
  for (const int k : {10, 100, 300, 1000, 4096, 5000}) {
    const TopK want = cpu_lists(queries, kFarQueries, train, kFarTrain, kFarDims, k);
    for (const auto method : {SelectMethod::kmin, SelectMethod::bitonic, SelectMethod::fast})
      for (const std::int64_t chunk_rows : {kFarTrain, std::int64_t{6000}}) {
        auto search = gpu_search(method);
        ASSERT_TRUE(search);
        TopK got(kFarQueries, k);
        search_chunks(*search, queries, kFarQueries, train, kFarDims, chunk_rows, got);
        EXPECT_EQ(count_differences(got, want, kFarQueries, select_method_name(method).data()), 0)
            << "k " << k << " chunk " << chunk_rows;
      }
  }
}

// Near-duplicate real-valued spectra (about 1000 plus noise of 0.05): every expansion
// loses its digits, so every pair is recomputed in FP64, on the warp path by the whole
// warp (warp_direct_distance: an order-free sum rules most pairs out, and the terms of
// those that could be kept are added in band order, 256 bands a pass). Real-valued
// terms round, so only band order gives the serial sum's bits: lists equal the CPU's
// bit for bit and each distance is the float of the band-order FP64 sum, at 37 bands
// and at 300 (two passes, no multiple of 32).
TEST(CudaKnnSearch, RecomputedDistancesKeepTheBandOrderSum) {
  HB_REQUIRE_GPU();
  constexpr std::int64_t kNearQueries = 301, kNearTrain = 2003;
  for (const std::int64_t dims : {std::int64_t{37}, std::int64_t{300}}) {
    const auto near = [dims](std::int64_t rows, std::uint32_t seed) {
      std::mt19937 rng(seed);
      std::normal_distribution<float> noise(0.0f, 0.05f);
      std::vector<float> out(static_cast<std::size_t>(rows * dims));
      for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = 1000.0f + 3.7f * static_cast<float>(i % static_cast<std::size_t>(dims)) + noise(rng);
      return out;
    };
    const auto queries = near(kNearQueries, 71), train = near(kNearTrain, 72);
    for (const int k : {1, 5, 32}) {
      const TopK want = cpu_lists(queries, kNearQueries, train, kNearTrain, dims, k);
      auto search = gpu_search(SelectMethod::fast);
      ASSERT_TRUE(search);
      TopK got(kNearQueries, k);
      search_chunks(*search, queries, kNearQueries, train, dims, kNearTrain, got);
      EXPECT_EQ(count_differences(got, want, kNearQueries, "fast"), 0) << "dims " << dims << " k " << k;
      std::int64_t off_oracle = 0;
      for (std::int64_t q = 0; q < kNearQueries; ++q)
        for (int j = 0; j < k; ++j) {
          const float* t = train.data() + got.indices(q)[j] * dims;
          const double want64 = test::squared_distance64(queries.data() + q * dims, t, dims);
          off_oracle += got.distances(q)[j] != static_cast<float>(want64);
        }
      EXPECT_EQ(off_oracle, 0) << "dims " << dims << " k " << k;
    }
  }
}

// An empty list is first filled under a bound estimated from 2048 evenly spaced
// columns (kernels/knn/fast.cu). Here every tenth training row, and only those, lies
// near the queries, and 20480 rows put every sampled column among them: fewer than k
// rows lie within the estimate, and the search must start the row again from +inf.
TEST(CudaKnnSearch, AMisleadingSampleFallsBackToTheExactList) {
  HB_REQUIRE_GPU();
  constexpr std::int64_t kRows = 20480, kSampleDims = 8, kSampleQueries = 200;
  auto train = test::random_integers(kRows, kSampleDims, 3, 93);
  for (std::int64_t t = 0; t < kRows; ++t)
    if (t % 10 != 0)
      for (std::int64_t b = 0; b < kSampleDims; ++b) train[static_cast<std::size_t>(t * kSampleDims + b)] += 20.0f;
  const auto queries = test::random_integers(kSampleQueries, kSampleDims, 3, 94);
  for (const int k : {300, 1000, 4096}) {
    const TopK want = cpu_lists(queries, kSampleQueries, train, kRows, kSampleDims, k);
    for (const std::int64_t chunk_rows : {kRows, std::int64_t{6000}}) {
      auto search = gpu_search(SelectMethod::fast);
      ASSERT_TRUE(search);
      TopK got(kSampleQueries, k);
      search_chunks(*search, queries, kSampleQueries, train, kSampleDims, chunk_rows, got);
      EXPECT_EQ(count_differences(got, want, kSampleQueries, "fast"), 0) << "k " << k << " chunk " << chunk_rows;
    }
  }
}

// The scenarios every backend passes (tests/src/knn/knn_search_scenarios.hpp).
test::SearchFactory gpu_factory() {
  return [](SelectMethod method) { return gpu_search(method); };
}

TEST(CudaKnnSearch, TiesGoToTheLowerTrainingIndex) {
  HB_REQUIRE_GPU();
  test::expect_ties_go_to_the_lower_index(gpu_factory(), kDims);
}

// Lists kept on the device through a sequence, pinned query slots refilled in place.
TEST(CudaKnnSearch, SequencesOverQuerySlotsEqualPlainSearches) {
  HB_REQUIRE_GPU();
  test::expect_sequences_over_query_slots_equal_plain_searches(gpu_factory(), kDims);
}

// Raw tiles uploaded as read and their queries gathered on the GPU, from another thread.
TEST(CudaKnnSearch, GatheredTilesEqualHostQueries) {
  HB_REQUIRE_GPU();
  test::expect_gathered_tiles_equal_host_queries(gpu_factory(), kDims);
}

// Valid pixels flagged and listed on the GPU (kernels/valid_pixels.cu): valid_pixels'
// list for every narrow type and f32 and kind of ignore value, and the host's queries.
TEST(CudaKnnSearch, ListedTilesEqualHostLists) {
  HB_REQUIRE_GPU();
  test::expect_listed_tiles_equal_host_lists(gpu_factory(), kDims);
}

// The tile's pixels gathered on the GPU from scene bands kDims .. 1 of kDims + 1, as
// read and under shifts whose subtraction must round (thirds, and values far beyond the
// samples), give exactly the host's gather_queries bits.
void expect_gathering_gives_the_hosts_bits(KnnSearch& search, const io::Tile& tile, const std::string& what) {
  std::vector<double> shift(static_cast<std::size_t>(kDims));
  for (std::size_t f = 0; f < shift.size(); ++f) shift[f] = (f % 2 ? -1e7 : 1.0) * static_cast<double>(f + 1) / 3.0;
  std::vector<std::int64_t> bands(static_cast<std::size_t>(kDims));
  std::iota(bands.rbegin(), bands.rend(), std::int64_t{1});
  std::vector<std::int64_t> pixel(static_cast<std::size_t>(tile.pixels()));
  std::iota(pixel.begin(), pixel.end(), std::int64_t{0});
  const std::int64_t floats = tile.pixels() * kDims;
  for (const bool shifted : {false, true}) {
    const std::span<const double> s = shifted ? std::span<const double>(shift) : std::span<const double>();
    auto gathered = search.gather(1, tile, pixel, bands, s);
    ASSERT_TRUE(gathered.ok()) << gathered.error().line();
    std::vector<float> got(static_cast<std::size_t>(floats)), want(got.size());
    ASSERT_TRUE(search.copy_queries(*gathered, floats, got.data()).ok());
    classify::gather_queries(tile, pixel, bands, s, want.data());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0) << what << (shifted ? " shifted" : " as read");
  }
}

// Every value of each narrow type.
TEST(CudaKnnSearch, GatheringOnTheGpuGivesTheHostsBitsForEveryValue) {
  HB_REQUIRE_GPU();
  auto search = gpu_search(SelectMethod::fast);
  for (const auto type : {DataType::u8, DataType::i16, DataType::u16})
    visit_data_type(type, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_integral_v<T> && sizeof(T) <= 2) {
        const std::int64_t values = std::int64_t{std::numeric_limits<T>::max()} - std::numeric_limits<T>::min() + 1;
        const std::int64_t pixels = (values + kDims) / (kDims + 1);
        io::Tile tile(type, pixels, kDims + 1, {0, 1}, {0, 1}, search->tile_allocator());
        auto samples = tile.as<T>();
        for (std::size_t i = 0; i < samples.size(); ++i)
          samples[i] = static_cast<T>(std::numeric_limits<T>::min() + static_cast<std::int64_t>(i) % values);
        expect_gathering_gives_the_hosts_bits(*search, tile, std::string(data_type_name(type)));
      }
    });
}

// f32: any finite sample, signed zeros, subnormals and the largest magnitudes among them.
TEST(CudaKnnSearch, GatheringF32OnTheGpuGivesTheHostsBitsForAnyFiniteSample) {
  HB_REQUIRE_GPU();
  auto search = gpu_search(SelectMethod::fast);
  io::Tile tile(DataType::f32, 20000, kDims + 1, {0, 1}, {0, 1}, search->tile_allocator());
  std::mt19937 rng(41);
  auto samples = tile.as<float>();
  for (std::size_t i = 0; i < samples.size(); ++i) {
    auto bits = static_cast<std::uint32_t>(rng());
    if (i % 7 == 0) bits &= 0x807fffffu;  // a subnormal or a signed zero
    if ((bits & 0x7f800000u) == 0x7f800000u) bits ^= 0x40000000u;  // made finite
    std::memcpy(&samples[i], &bits, 4);
  }
  expect_gathering_gives_the_hosts_bits(*search, tile, "f32");
}

TEST(CudaKnnSearch, DuplicatesOfRealValuedRowsAreAtExactlyZero) {
  HB_REQUIRE_GPU();
  test::expect_duplicates_at_exactly_zero(gpu_factory(), kDims);
}

// cuBLAS and OpenBLAS round differently: within rounding of float64, not bitwise.
TEST(CudaKnnSearch, CentredRadiancesMatchFloat64WithinRounding) {
  HB_REQUIRE_GPU();
  for (const auto method : {SelectMethod::bitonic, SelectMethod::fast})
    test::expect_centred_radiances_within_rounding(gpu_factory(), method, kTrain, kDims);
}

// Cosine on integer data: inner products and norms are exact and the division is IEEE
// on both sides, so GPU and CPU agree bit for bit; zero vectors sit at distance 1.
TEST(CudaKnnSearch, CosineEqualsTheCpuAndTreatsZeroVectorsAsDistanceOne) {
  HB_REQUIRE_GPU();
  auto queries = test::random_integers(211, kDims, 7, 61);
  auto train = test::random_integers(3001, kDims, 7, 62);
  std::fill_n(train.begin() + 5 * kDims, kDims, 0.0f);
  std::fill_n(queries.begin(), kDims, 0.0f);
  for (const int k : {7, 500}) {
    auto cpu = make_cpu_knn_search({Metric::cosine, SelectMethod::fast, std::int64_t{1} << 20});
    TopK want(211, k);
    search_chunks(*cpu, queries, 211, train, kDims, 1000, want);
    for (const auto method : {SelectMethod::kmin, SelectMethod::bitonic, SelectMethod::fast}) {
      auto search = gpu_search(method, Metric::cosine);
      ASSERT_TRUE(search);
      TopK got(211, k);
      search_chunks(*search, queries, 211, train, kDims, 1000, got);
      EXPECT_EQ(count_differences(got, want, 211, select_method_name(method).data()), 0) << "k " << k;
      for (int j = 0; j < k; ++j) {
        ASSERT_EQ(got.distances(0)[j], 1.0f);
        ASSERT_EQ(got.indices(0)[j], j);
      }
      for (std::int64_t q = 1; q < 211; ++q) {
        const auto ref = test::brute_force(queries.data() + q * kDims, train, kDims, 1, test::cosine_distance64);
        ASSERT_NEAR(got.distances(q)[0], ref.distance[0], 1e-6);
      }
    }
  }
}

TEST(CudaKnnSearch, AutomaticSelectionReportsItsChoice) {
  HB_REQUIRE_GPU();
  const auto& data = exact();
  for (const int k : {1, 64, 4096}) {
    auto search = gpu_search(SelectMethod::automatic);
    ASSERT_TRUE(search);
    EXPECT_EQ(search->select_method(), SelectMethod::automatic);
    TopK running(300, k);
    ASSERT_TRUE(search->search(data.queries.data(), 300, {data.train.data(), kTrain, kDims, 0}, running).ok());
    EXPECT_NE(search->select_method(), SelectMethod::automatic);
    EXPECT_EQ(search->backend_name(), "cuda");
  }
}

// From 128 features up to k = 1024 auto runs tensor, fast beyond (gpu_automatic_method),
// and either way returns the CPU's lists bit for bit, training whole or in chunks.
TEST(CudaKnnSearch, AutomaticRunsTensorFrom128FeaturesUpToK1024) {
  HB_REQUIRE_GPU();
  constexpr std::int64_t kWideQueries = 300, kWideTrain = 6007, kWideDims = 160;
  const auto queries = test::random_integers(kWideQueries, kWideDims, 9, 61);
  const auto train = test::random_integers(kWideTrain, kWideDims, 9, 62);
  for (const int k : {10, 1024, 1025}) {
    const TopK want = cpu_lists(queries, kWideQueries, train, kWideTrain, kWideDims, k);
    for (const std::int64_t chunk_rows : {kWideTrain, std::int64_t{2500}}) {
      auto search = gpu_search(SelectMethod::automatic);
      ASSERT_TRUE(search);
      TopK got(kWideQueries, k);
      search_chunks(*search, queries, kWideQueries, train, kWideDims, chunk_rows, got);
      EXPECT_EQ(search->select_method(), k <= 1024 ? SelectMethod::tensor : SelectMethod::fast) << "k " << k;
      EXPECT_EQ(count_differences(got, want, kWideQueries, "auto"), 0) << "k " << k << " chunk " << chunk_rows;
    }
  }
}

// Tensor's lists are the exact k smallest of one distance (q.t one FMA chain in band
// order), so on real values, where cuBLAS's SGEMM rounds by shape, they are still the
// same bits whatever the training chunking: whole, in 777-row and in 13-row chunks.
TEST(CudaKnnSearch, TensorListsDoNotDependOnTheChunking) {
  HB_REQUIRE_GPU();
  constexpr std::int64_t kRealQueries = 300, kRealTrain = 6007, kRealDims = 160;
  std::mt19937 rng(63);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> queries(static_cast<std::size_t>(kRealQueries * kRealDims));
  std::vector<float> train(static_cast<std::size_t>(kRealTrain * kRealDims));
  for (auto& x : queries) x = value(rng);
  for (auto& x : train) x = value(rng);
  for (const int k : {10, 1024}) {
    const auto lists = [&](std::int64_t chunk_rows) {
      auto search = gpu_search(SelectMethod::automatic);
      TopK got(kRealQueries, k);
      if (search) search_chunks(*search, queries, kRealQueries, train, kRealDims, chunk_rows, got);
      EXPECT_TRUE(search && search->select_method() == SelectMethod::tensor) << "k " << k;
      return got;
    };
    const TopK whole = lists(kRealTrain);
    for (const std::int64_t chunk_rows : {std::int64_t{777}, std::int64_t{13}})
      EXPECT_EQ(count_differences(lists(chunk_rows), whole, kRealQueries, "tensor"), 0)
          << "k " << k << " chunk " << chunk_rows;
  }
}

// Fewer training rows than k: unfilled slots stay empty, on every method.
// k beyond the 30 training rows: the warp path (k = 32) and the pool (k = 40, and 200,
// whose final sort pads 200 slots, 170 of them empty, to 256) leave the extra slots empty.
TEST(CudaKnnSearch, UnfilledSlotsStayEmpty) {
  HB_REQUIRE_GPU();
  const auto& data = exact();
  const std::vector<float> small(data.train.begin(), data.train.begin() + 30 * kDims);
  for (const int k : {32, 40, 200})
    for (const auto method : {SelectMethod::kmin, SelectMethod::bitonic, SelectMethod::fast}) {
      auto search = gpu_search(method);
      ASSERT_TRUE(search);
      TopK got(50, k);
      search_chunks(*search, data.queries, 50, small, kDims, 13, got);
      auto cpu = make_cpu_knn_search({Metric::euclidean, SelectMethod::fast, std::int64_t{1} << 20});
      TopK want(50, k);
      search_chunks(*cpu, data.queries, 50, small, kDims, 13, want);
      EXPECT_EQ(count_differences(got, want, 50, select_method_name(method).data()), 0) << "k " << k;
      for (std::int64_t q = 0; q < 50; ++q)
        for (int j = 30; j < k; ++j) {
          ASSERT_EQ(got.indices(q)[j], kNoIndex) << select_method_name(method) << " k " << k;
          ASSERT_EQ(got.distances(q)[j], kNoDistance);
        }
    }
}

// The scene passes leave a GPU search's lists unwritten (TopK::resize), since the
// search makes empty lists on the device: lists whose memory holds a previous tile's
// neighbours come out as fresh lists do, unfilled slots included, in pageable and in
// pinned list memory, over one chunk and several, in one query block and in many.
TEST(CudaKnnSearch, UnwrittenListsEqualFreshLists) {
  HB_REQUIRE_GPU();
  const auto& data = exact();
  const std::vector<float> small(data.train.begin(), data.train.begin() + 30 * kDims);
  for (const auto method : {SelectMethod::kmin, SelectMethod::bitonic, SelectMethod::fast})
    for (const int k : {7, 40, 300})
      for (const std::int64_t budget : {std::int64_t{0}, std::int64_t{256} << 10})
        for (const bool pinned : {false, true}) {
          auto search = gpu_search(method, Metric::euclidean, budget);
          ASSERT_TRUE(search);
          ASSERT_TRUE(search->makes_empty_lists());
          const auto& train = k == 40 ? small : data.train;  // 30 rows: slots 30..39 stay empty
          TopK want(kQueries, k);
          search_chunks(*search, data.queries, kQueries, train, kDims, 2000, want);
          TopK got(kQueries, k, pinned ? search->list_memory() : std::pmr::get_default_resource());
          for (std::int64_t q = 0; q < kQueries; ++q) {  // a previous tile's lists
            std::fill_n(got.distances(q), k, 1.0f);
            std::fill_n(got.indices(q), k, std::int64_t{17});
          }
          got.resize(kQueries - 3, true);
          search_chunks(*search, data.queries, kQueries - 3, train, kDims, 2000, got);
          EXPECT_EQ(count_differences(got, want, kQueries - 3, select_method_name(method).data()), 0)
              << "k " << k << " budget " << budget << " pinned " << pinned;
        }
}

}  // namespace
}  // namespace hb::knn
