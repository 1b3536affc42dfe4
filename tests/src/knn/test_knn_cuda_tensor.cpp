// The tensor method (TF32 tensor-core inner products, a proven bound, exact finishing
// of the pairs the bound keeps: kernels/knn/tensor.cu) returns fast's lists bit for bit:
// uniform real values, clusters, values far from the origin (offset 1e4), near-ties
// (small integers, hundreds of equal distances) and duplicated rows; k in {1, 10, 100,
// 1024, 4096}, d in {32, 224} and rows of up to 8192 bands; one chunk and several, one
// slab and several, both cases of the sampled bound (its check failing makes a row be
// rescanned whole). Its scan path (d <= 16, k <= 8) gives its slabs' lists bit for
// bit. And the device vote: lists voted on the GPU never take host memory.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "src/knn/batch_vote.hpp"
#include "tests/src/knn/knn_cuda_test_support.hpp"
#include "tests/src/knn/knn_search_scenarios.hpp"
#include "tests/src/knn/knn_test_support.hpp"

namespace hb::knn {
namespace {

using test::count_differences;
using test::search_chunks;

constexpr std::int64_t kQueries = 257, kTrain = 6007;

enum class Data { uniform, clustered, far, near_ties, duplicated };

const char* data_name(Data data) {
  switch (data) {
    case Data::uniform: return "uniform";
    case Data::clustered: return "clustered";
    case Data::far: return "far";
    case Data::near_ties: return "near-ties";
    case Data::duplicated: return "duplicated";
  }
  return "?";
}

// Rows of one scenario; queries and training rows drawn alike (seed apart).
std::vector<float> rows_of(Data data, std::int64_t rows, std::int64_t dims, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> out(static_cast<std::size_t>(rows * dims));
  switch (data) {
    case Data::uniform:
      for (auto& v : out) v = unit(rng);
      break;
    case Data::clustered: {
      std::mt19937 centres_rng(7);  // the same 16 centres for queries and training rows
      std::vector<float> centres(static_cast<std::size_t>(16 * dims));
      for (auto& v : centres) v = 100.0f * unit(centres_rng);
      std::uniform_int_distribution<int> centre(0, 15);
      for (std::int64_t r = 0; r < rows; ++r) {
        const int c = centre(rng);
        for (std::int64_t b = 0; b < dims; ++b)
          out[static_cast<std::size_t>(r * dims + b)] = centres[static_cast<std::size_t>(c * dims + b)] + 0.3f * unit(rng);
      }
      break;
    }
    case Data::far:
      for (auto& v : out) v = 1e4f + unit(rng);
      break;
    case Data::near_ties:
      out = test::random_integers(rows, dims, 2, seed);
      break;
    case Data::duplicated: {
      out = test::random_integers(rows, dims, 50, seed);
      for (std::int64_t r = 1; r < rows; r += 3)  // every third row repeats the one before
        std::copy_n(out.begin() + (r - 1) * dims, dims, out.begin() + r * dims);
      break;
    }
  }
  return out;
}

std::unique_ptr<KnnSearch> search_for(SelectMethod method, int slab_rows = 0, std::int64_t slab_bytes = 0,
                                      int scan_max_dims = 0) {
  SearchOptions options{Metric::euclidean, method, std::int64_t{1} << 20};
  options.fast_slab_rows = slab_rows;
  options.fast_slab_bytes = slab_bytes;
  options.tensor_scan_max_dims = scan_max_dims;
  auto search = make_knn_search(BackendKind::cuda, options);
  EXPECT_TRUE(search.ok()) << search.error().line();
  return search.ok() ? std::move(*search) : nullptr;
}

// The pairs in which tensor's lists differ from fast's on the same search (tensor made
// with search_for's slab options); what names the case in a failure's message.
std::int64_t tensor_against_fast(const std::vector<float>& queries, std::int64_t nq, const std::vector<float>& train,
                                 std::int64_t dims, std::int64_t chunk_rows, int k, const std::string& what,
                                 int slab_rows = 0, std::int64_t slab_bytes = 0) {
  auto fast = search_for(SelectMethod::fast);
  auto tensor = search_for(SelectMethod::tensor, slab_rows, slab_bytes);
  if (!fast || !tensor) return -1;
  TopK want(nq, k), got(nq, k);
  search_chunks(*fast, queries, nq, train, dims, chunk_rows, want);
  search_chunks(*tensor, queries, nq, train, dims, chunk_rows, got);
  EXPECT_EQ(tensor->select_method(), SelectMethod::tensor) << what;
  return count_differences(got, want, nq, what.c_str());
}

// Every training row but each n-th moved 20 away in every band: a sample of every n-th
// row sees only the near ones.
void move_far_but_every(std::vector<float>& train, std::int64_t rows, std::int64_t dims, std::int64_t n) {
  for (std::int64_t t = 0; t < rows; ++t)
    if (t % n != 0)
      for (std::int64_t b = 0; b < dims; ++b) train[static_cast<std::size_t>(t * dims + b)] += 20.0f;
}

class TensorEqualsFast : public ::testing::TestWithParam<std::tuple<Data, int>> {};

TEST_P(TensorEqualsFast, BitForBit) {
  HB_REQUIRE_GPU();
  const auto [data, dims] = GetParam();
  const auto queries = rows_of(data, kQueries, dims, 11);
  auto train = rows_of(data, kTrain, dims, 12);
  if (data == Data::duplicated)  // queries that are training rows, at distance exactly 0
    std::copy_n(queries.begin(), 40 * dims, train.begin() + 100 * dims);
  for (const int k : {1, 10, 100, 1024, 4096})
    for (const std::int64_t chunk_rows : {kTrain, std::int64_t{2500}}) {
      const std::string what = std::string(data_name(data)) + " d " + std::to_string(dims) + " k " +
                               std::to_string(k) + " chunk " + std::to_string(chunk_rows);
      EXPECT_EQ(tensor_against_fast(queries, kQueries, train, dims, chunk_rows, k, what), 0) << what;
    }
}

std::string scenario_name(const ::testing::TestParamInfo<TensorEqualsFast::ParamType>& param) {
  std::string name = data_name(std::get<0>(param.param));
  std::erase(name, '-');
  return name + "_d" + std::to_string(std::get<1>(param.param));
}

INSTANTIATE_TEST_SUITE_P(Scenarios, TensorEqualsFast,
                         ::testing::Combine(::testing::Values(Data::uniform, Data::clustered, Data::far,
                                                              Data::near_ties, Data::duplicated),
                                            ::testing::Values(32, 224)),
                         scenario_name);

// tensor's scan path (d <= 16, k <= 8: kernels/knn/tensor_scan.cu) gives its slabs'
// lists bit for bit, on every kind of data, for d and k up to and beyond its limits,
// whole chunks and chunks smaller than k, visited in order and in reverse.
TEST(TensorSearch, ScanEqualsTheSlabs) {
  HB_REQUIRE_GPU();
  for (const auto data : {Data::uniform, Data::clustered, Data::far, Data::near_ties, Data::duplicated})
    for (const std::int64_t dims : {1, 3, 10, 16, 17, 32}) {
      const auto queries = rows_of(data, kQueries, dims, 21);
      auto train = rows_of(data, kTrain, dims, 22);
      if (data == Data::duplicated) std::copy_n(queries.begin(), 40 * dims, train.begin() + 100 * dims);
      for (const int k : {1, 5, 8, 9, 32})
        for (const std::int64_t chunk_rows : {kTrain, std::int64_t{611}, std::int64_t{7}})
          for (const bool reverse : {false, true}) {
            if (chunk_rows == 7 && (dims % 8 != 1 || k != 8)) continue;  // a few of the slow many-chunk cases
            const std::string what = std::string(data_name(data)) + " d " + std::to_string(dims) + " k " +
                                     std::to_string(k) + " chunk " + std::to_string(chunk_rows) +
                                     (reverse ? " reversed" : "");
            auto scan = search_for(SelectMethod::tensor);
            auto slabs = search_for(SelectMethod::tensor, 0, 0, -1);
            ASSERT_TRUE(scan && slabs);
            TopK got(kQueries, k), want(kQueries, k);
            search_chunks(*scan, queries, kQueries, train, dims, chunk_rows, got, reverse);
            search_chunks(*slabs, queries, kQueries, train, dims, chunk_rows, want, reverse);
            EXPECT_EQ(count_differences(got, want, kQueries, what.c_str()), 0) << what;
          }
    }
}

// Many small slabs: 256 rows by 1024 columns, so that a row meets the list's bound in
// later slabs and queries span several slabs of rows.
TEST(TensorSearch, SmallSlabsEqualFast) {
  HB_REQUIRE_GPU();
  const auto queries = rows_of(Data::uniform, 700, 32, 21);
  const auto train = rows_of(Data::uniform, kTrain, 32, 22);
  for (const int k : {1, 10, 300, 1024})
    EXPECT_EQ(tensor_against_fast(queries, 700, train, 32, kTrain, k, "small slabs", 256, std::int64_t{1} << 20), 0)
        << "k " << k;
}

// Rows up to tensor_max_dims() bands: the exact stage's query row beside its other
// shared memory (and from k = 256 its staged pieces) passes the default 48 KiB a block.
// 37 bands are not whole float4s (the staged kernel gathers a lane at a time) and 1000
// end in half a piece. Small integers, whose inner products are exact in any order (a
// GEMM of this shape may split its sums).
TEST(TensorSearch, WideRowsEqualFast) {
  HB_REQUIRE_GPU();
  for (const int dims : {37, 1000, 4000, 8192}) {
    const auto queries = rows_of(Data::near_ties, 60, dims, 41);
    const auto train = rows_of(Data::near_ties, 3000, dims, 42);
    for (const int k : {10, 100, 300})
      EXPECT_EQ(tensor_against_fast(queries, 60, train, dims, 3000, k, "wide rows"), 0) << "d " << dims << " k " << k;
  }
}

// Every tenth training row near the queries: the evenly spaced sample sees only those,
// so its bound is too tight for k, fails its check, and the rows are rescanned whole.
TEST(TensorSearch, AMisleadingSampleRescansTheRow) {
  HB_REQUIRE_GPU();
  constexpr std::int64_t kRows = 20480, kDims = 8;
  auto train = test::random_integers(kRows, kDims, 3, 93);
  move_far_but_every(train, kRows, kDims, 10);
  const auto queries = test::random_integers(200, kDims, 3, 94);
  for (const int k : {300, 1000, 4096})
    EXPECT_EQ(tensor_against_fast(queries, 200, train, kDims, kRows, k, "misleading sample"), 0) << "k " << k;
}

// Every training row moved 20 away in every band but those a whole-chunk bound samples
// from 50001 rows: 2048 in runs of 8 adjacent rows, 193 apart (256 runs; 193 the largest
// prime at most 50001 / 256).
void move_far_but_sampled(std::vector<float>& train, std::int64_t rows, std::int64_t dims) {
  for (std::int64_t t = 0; t < rows; ++t)
    if (t % 193 >= 8 || t / 193 >= 256)
      for (std::int64_t b = 0; b < dims; ++b) train[static_cast<std::size_t>(t * dims + b)] += 20.0f;
}

// From k = 10, where the chunk's rows outgrow the L2's share (50001 training rows of 224
// bands fill three L2-sized blocks on an H100 or H200; slab rows padded to 50004 columns,
// whose last the bound's scan takes alone), each row is first bounded over
// the whole chunk from 2048 sampled rows and the bound refined by a count, whose pass
// also keeps the row's pairs up to k = 2048: on small integers (ties by the hundred at
// every distance) the refined bound is proven and used; with the other rows moved far
// away the sample sees only near rows, its bound holds fewer than k pairs, and the rows
// keep the filter's own bound. At k = 1 the filter's own bound runs alone, and at
// k = 4096 too, where a block's 16 k columns cover the chunk.
TEST(TensorSearch, AChunkBoundOverSeveralBlocksEqualsFast) {
  HB_REQUIRE_GPU();
  constexpr std::int64_t kRows = 50001, kDims = 224, kBoundQueries = 200;
  const auto queries = test::random_integers(kBoundQueries, kDims, 2, 96);
  for (const bool misleading : {false, true}) {
    auto train = test::random_integers(kRows, kDims, 2, 97);
    if (misleading) move_far_but_sampled(train, kRows, kDims);
    for (const int k : {1, 10, 32, 128, 1024, 4096}) {
      const std::string what = std::string("chunk bound k ") + std::to_string(k) + (misleading ? ", misleading" : "");
      EXPECT_EQ(tensor_against_fast(queries, kBoundQueries, train, kDims, kRows, k, what), 0) << what;
    }
  }
}

// Cosine has no tensor bound: the search runs fast and says tensor was asked for.
TEST(TensorSearch, CosineRunsFast) {
  HB_REQUIRE_GPU();
  const auto queries = test::random_integers(100, 16, 7, 31), train = test::random_integers(3000, 16, 7, 32);
  auto fast = test::gpu_search(SelectMethod::fast, Metric::cosine);
  auto tensor = test::gpu_search(SelectMethod::tensor, Metric::cosine);
  ASSERT_TRUE(fast && tensor);
  TopK want(100, 20), got(100, 20);
  search_chunks(*fast, queries, 100, train, 16, 3000, want);
  search_chunks(*tensor, queries, 100, train, 16, 3000, got);
  EXPECT_EQ(count_differences(got, want, 100, "cosine"), 0);
}

// Without neighbour outputs the lists are voted where they are: the host lists, resized
// unwritten as the scene passes do, take no memory, and the votes are the CPU's.
TEST(TensorSearch, DeviceVotesTakeNoHostLists) {
  HB_REQUIRE_GPU();
  constexpr std::int64_t kRows = 3000, kDims = 16, kNq = 500;
  constexpr int k = 64;
  const auto train = test::random_integers(kRows, kDims, 7, 41);
  const auto queries = test::random_integers(kNq, kDims, 7, 42);
  std::vector<std::uint16_t> labels(kRows);
  for (std::int64_t t = 0; t < kRows; ++t) labels[static_cast<std::size_t>(t)] = static_cast<std::uint16_t>(1 + t % 5);
  const VoteRule rule{labels, 6, Metric::euclidean, Weights::distance};
  for (const auto method : {SelectMethod::fast, SelectMethod::tensor}) {
    auto search = test::gpu_search(method);
    ASSERT_TRUE(search);
    ASSERT_TRUE(search->prepare_votes(rule));
    float* slot = search->query_buffer(kNq * kDims, 0);
    std::copy(queries.begin(), queries.end(), slot);
    TopK running(0, k, search->list_memory());
    running.resize(kNq, search->makes_empty_lists());
    const auto chunk_at = [&](int step) -> Result<TrainingChunk> {
      return TrainingChunk{train.data() + step * 1500 * kDims, 1500, kDims, step * 1500};
    };
    std::vector<VoteResult> votes;
    auto voted = search->search_sequence_and_vote(slot, kNq, 2, chunk_at, running, votes);
    ASSERT_TRUE(voted.ok()) << voted.error().line();
    ASSERT_TRUE(*voted);
    EXPECT_EQ(running.allocated_pairs(), 0) << select_method_name(method);
    TopK lists(kNq, k);
    auto cpu = make_cpu_knn_search({Metric::euclidean, SelectMethod::fast, std::int64_t{1} << 20});
    search_chunks(*cpu, queries, kNq, train, kDims, 1500, lists);
    std::vector<VoteResult> want(static_cast<std::size_t>(kNq));
    ASSERT_TRUE(make_cpu_batch_voter(rule)->vote(lists, kNq, want).ok());
    ASSERT_EQ(votes.size(), want.size());
    for (std::size_t q = 0; q < want.size(); ++q) {
      EXPECT_EQ(votes[q].label, want[q].label) << select_method_name(method) << " query " << q;
      EXPECT_EQ(votes[q].confidence, want[q].confidence) << select_method_name(method) << " query " << q;
    }
  }
}

}  // namespace
}  // namespace hb::knn
