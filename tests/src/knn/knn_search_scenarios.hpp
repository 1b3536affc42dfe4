// Search scenarios that every KnnSearch backend must pass, shared by the CPU test
// (tests/src/knn/test_knn_search.cpp) and the GPU test (tests/src/knn/test_knn_cuda_search.cpp):
// a backend is given as a factory from select method to search.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <type_traits>
#include <vector>

#include "src/base/data_type.hpp"
#include "src/classify/features.hpp"
#include "src/knn/prepared_training.hpp"
#include "src/knn/search.hpp"
#include "tests/src/knn/knn_test_support.hpp"

namespace hb::knn::test {

using SearchFactory = std::function<std::unique_ptr<KnnSearch>(SelectMethod)>;

inline const std::vector<SelectMethod>& explicit_methods() {
  static const std::vector<SelectMethod> methods{SelectMethod::kmin, SelectMethod::bitonic, SelectMethod::fast};
  return methods;
}

// Folds every chunk of `train` ([n, dims]) into `running` (optionally last chunk first).
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

// Duplicate training rows at equal distance: the lower index wins, whatever the method,
// even when the duplicates sit in different chunks visited out of order.
inline void expect_ties_go_to_the_lower_index(const SearchFactory& make, std::int64_t dims) {
  auto train = random_integers(60, dims, 7, 5);
  for (const std::int64_t t : {3, 10, 42, 57}) std::copy_n(train.begin() + 20 * dims, dims, train.begin() + t * dims);
  const std::vector<float> query(train.begin() + 20 * dims, train.begin() + 21 * dims);
  const std::vector<std::int64_t> want{3, 10, 20, 42, 57};
  for (const auto method : explicit_methods())
    for (const std::int64_t chunk : {60, 7, 11})
      for (const bool reverse : {false, true}) {
        auto search = make(method);
        ASSERT_TRUE(search);
        TopK got(1, 5);
        search_chunks(*search, query, 1, train, dims, chunk, got, reverse);
        for (int j = 0; j < 5; ++j) {
          EXPECT_EQ(got.indices(0)[j], want[static_cast<std::size_t>(j)])
              << select_method_name(method) << " chunk " << chunk << " reverse " << reverse;
          EXPECT_EQ(got.distances(0)[j], 0.0f);
        }
      }
}

// Real-valued duplicates: the GEMM expansion alone leaves rounding noise where the
// distance is zero; it must come out exactly 0 so that ties and zero-distance votes work.
inline void expect_duplicates_at_exactly_zero(const SearchFactory& make, std::int64_t dims) {
  constexpr std::int64_t kGroups = 16;
  auto train = random_radiances(300, dims, 8);
  for (std::size_t i = 0; i < train.size(); ++i)
    train[i] += 1500.0f * static_cast<float>(i / static_cast<std::size_t>(dims) % 4);  // far clusters
  for (std::int64_t g = 0; g < kGroups; ++g)  // rows 20+g, 100+g and 200+g are equal
    for (const std::int64_t copy : {100 + g, 200 + g})
      std::copy_n(train.begin() + (20 + g) * dims, dims, train.begin() + copy * dims);
  auto source = classify::memory_training_source(train, dims, "dups");
  auto prepared = PreparedTraining::prepare(*source, Metric::euclidean, 1 << 20);
  ASSERT_TRUE(prepared.ok());
  prepared->set_chunk_rows(128);
  std::vector<float> queries(train.begin() + 20 * dims, train.begin() + (20 + kGroups) * dims);
  prepared->prepare_queries(queries.data(), kGroups);
  for (const auto method : explicit_methods()) {
    auto search = make(method);
    ASSERT_TRUE(search);
    TopK running(kGroups, 4);
    for (std::int64_t c = prepared->chunk_count(); c-- > 0;)
      ASSERT_TRUE(search->search(queries.data(), kGroups, *prepared->chunk(c), running).ok());
    for (std::int64_t g = 0; g < kGroups; ++g) {
      const std::vector<std::int64_t> want{20 + g, 100 + g, 200 + g};
      for (int j = 0; j < 3; ++j) {
        EXPECT_EQ(running.indices(g)[j], want[static_cast<std::size_t>(j)]) << select_method_name(method) << " group " << g;
        EXPECT_EQ(running.distances(g)[j], 0.0f) << select_method_name(method) << " group " << g;
      }
      EXPECT_GT(running.distances(g)[3], 0.0f);
    }
  }
}

// Radiance-like data centred on the training mean (PreparedTraining, streamed chunks):
// distances within FP32 rounding of float64, each returned neighbour truly at its
// rank's distance, and at most 1% of ranks swapped between near-ties.
inline void expect_centred_radiances_within_rounding(const SearchFactory& make, SelectMethod method,
                                                     std::int64_t train_rows, std::int64_t dims) {
  constexpr std::int64_t kQueries = 301;
  constexpr int k = 1000;
  auto queries = random_radiances(kQueries, dims, 21);
  const auto train_raw = random_radiances(train_rows, dims, 22);
  auto source = classify::memory_training_source(train_raw, dims, "radiances");
  auto prepared = PreparedTraining::prepare(*source, Metric::euclidean, 0);
  ASSERT_TRUE(prepared.ok());
  prepared->set_chunk_rows(1024);
  ASSERT_FALSE(prepared->cached());
  auto centred = queries;
  prepared->prepare_queries(centred.data(), kQueries);
  auto search = make(method);
  ASSERT_TRUE(search);
  TopK running(kQueries, k);
  for (std::int64_t c = 0; c < prepared->chunk_count(); ++c) {
    auto chunk = prepared->chunk(c);
    ASSERT_TRUE(chunk.ok());
    ASSERT_TRUE(search->search(centred.data(), kQueries, *chunk, running).ok());
  }
  std::int64_t exact_rank_matches = 0;
  for (std::int64_t q = 0; q < kQueries; ++q) {
    const auto ref = brute_force(queries.data() + q * dims, train_raw, dims, k, squared_distance64);
    for (int j = 0; j < k; ++j) {
      const double want = ref.distance[static_cast<std::size_t>(j)];
      const double tolerance = 2e-6 * want + 1e-3;
      const auto idx = running.indices(q)[j];
      ASSERT_GE(idx, 0);
      ASSERT_LT(idx, train_rows);
      const double truth = squared_distance64(queries.data() + q * dims, train_raw.data() + idx * dims, dims);
      ASSERT_NEAR(truth, want, tolerance) << select_method_name(method) << " query " << q << " rank " << j;
      ASSERT_NEAR(running.distances(q)[j], want, tolerance);
      exact_rank_matches += idx == ref.index[static_cast<std::size_t>(j)];
    }
  }
  EXPECT_GT(exact_rank_matches, kQueries * k * 99 / 100);  // only near-ties may swap places
}

// The ring's use: query tiles packed into the two query_buffer slots in turn (a slot
// refilled in place holds new queries), each searched with search_sequence over shards
// that include empty ones (a rank without training pixels), the first and the last
// among them, into one TopK resized for each tile as the ring does (a GPU search's left
// unwritten, with the last tile's pairs in memory). Every method gives exactly the
// lists of plain chunk-by-chunk searches of the same queries.
inline void expect_sequences_over_query_slots_equal_plain_searches(const SearchFactory& make, std::int64_t dims) {
  constexpr std::int64_t kRows = 301;
  const auto train = random_integers(900, dims, 7, 21);
  // Empty shards first, between and last (a rank whose own shard is empty starts with one).
  const std::vector<std::pair<std::int64_t, std::int64_t>> shards{{0, 0}, {0, 250}, {250, 0}, {250, 650}, {900, 0}};
  const auto shard_chunk = [&](int step) -> Result<TrainingChunk> {
    const auto [first, count] = shards[static_cast<std::size_t>(step)];
    return TrainingChunk{train.data() + first * dims, count, dims, first};
  };
  for (const auto method : explicit_methods())
    for (const int k : {5, 40}) {
      auto search = make(method);
      auto reference = make(method);
      ASSERT_TRUE(search && reference);
      TopK got(0, k, search->list_memory());  // as the ring keeps them: pinned on a GPU, reused
      for (int tile = 0; tile < 4; ++tile) {  // slots 0, 1, 0, 1: each refill holds other queries
        const auto queries = random_integers(kRows, dims, 7, 100 + static_cast<std::uint32_t>(tile));
        float* slot = search->query_buffer(kRows * dims, tile % 2);
        std::copy(queries.begin(), queries.end(), slot);
        got.resize(kRows - tile, search->makes_empty_lists());  // the last tile's lists left in memory
        TopK want(kRows, k);
        ASSERT_TRUE(search->search_sequence(slot, kRows - tile, static_cast<int>(shards.size()), shard_chunk, got).ok());
        for (int step = 0; step < static_cast<int>(shards.size()); ++step)
          ASSERT_TRUE(reference->search(queries.data(), kRows, *shard_chunk(step), want).ok());
        for (std::int64_t q = 0; q < kRows - tile; ++q)
          for (int j = 0; j < k; ++j) {
            ASSERT_EQ(got.indices(q)[j], want.indices(q)[j]) << select_method_name(method) << " tile " << tile;
            ASSERT_EQ(got.distances(q)[j], want.distances(q)[j]) << select_method_name(method) << " tile " << tile;
          }
      }
    }
}

// The sample types a GPU search gathers itself (KnnSearch::gathers).
template <class T>
inline constexpr bool kGatheredType = std::is_same_v<T, float> || (std::is_integral_v<T> && sizeof(T) <= 2);
inline constexpr DataType kGatheredTypes[] = {DataType::u8, DataType::i16, DataType::u16, DataType::f32};

// Random samples: any value of a narrow type; for f32, finite values of either sign,
// whole and fractional, small and far beyond the shifts.
template <class T>
void fill_random_samples(std::span<T> values, std::mt19937& rng) {
  if constexpr (std::is_integral_v<T>) {
    std::uniform_int_distribution<int> value(std::numeric_limits<T>::min(), std::numeric_limits<T>::max());
    for (auto& v : values) v = static_cast<T>(value(rng));
  } else {
    std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
    std::uniform_int_distribution<int> exponent(-20, 24);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const double v = std::ldexp(mantissa(rng), exponent(rng));
      values[i] = static_cast<T>(i % 5 == 0 ? std::round(v) : v);
    }
  }
}

// Gathered queries, QueryTiles' path for u8/i16/u16 and f32 scenes: raw tiles (in the search's
// tile memory, bad bands and invalid pixels left in) handed to gather() from another
// thread (as QueryTiles' worker does), slots 0, 1, 0, 1, give exactly the host's
// gather_queries rows (copy_queries) and, searched plainly and in sequences over
// shards, exactly their lists; over each type's whole range, with and without a
// shift, for every method.
inline void expect_gathered_tiles_equal_host_queries(const SearchFactory& make, std::int64_t dims) {
  constexpr std::int64_t kPixels = 150;
  const std::int64_t scene_bands = dims + 3;
  std::vector<std::int64_t> bands;  // every scene band but three
  for (std::int64_t b = 0; b < scene_bands; ++b)
    if (b != 1 && b != dims / 2 && b != scene_bands - 1) bands.push_back(b);
  std::vector<std::int64_t> pixel;  // every pixel but every seventh
  for (std::int64_t p = 0; p < kPixels; ++p)
    if (p % 7 != 3) pixel.push_back(p);
  const auto rows = static_cast<std::int64_t>(pixel.size());
  const auto train = random_radiances(700, dims, 77);
  const std::vector<std::pair<std::int64_t, std::int64_t>> shards{{0, 300}, {300, 0}, {300, 400}};
  const auto shard_chunk = [&](int step) -> Result<TrainingChunk> {
    const auto [first, count] = shards[static_cast<std::size_t>(step)];
    return TrainingChunk{train.data() + first * dims, count, dims, first};
  };
  std::vector<double> shift(static_cast<std::size_t>(dims));
  for (std::size_t f = 0; f < shift.size(); ++f) shift[f] = 1000.0 + static_cast<double>(f) / 3.0;
  const auto expect_equal = [](const TopK& got, const TopK& want, const std::string& what) {
    for (std::int64_t q = 0; q < got.queries(); ++q)
      for (int j = 0; j < got.k(); ++j) {
        ASSERT_EQ(got.indices(q)[j], want.indices(q)[j]) << what << " query " << q;
        ASSERT_EQ(got.distances(q)[j], want.distances(q)[j]) << what << " query " << q;
      }
  };
  for (const auto type : kGatheredTypes)
    visit_data_type(type, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (kGatheredType<T>) {
        std::mt19937 rng(static_cast<unsigned>(type));
        for (const bool shifted : {false, true})
          for (const auto method : explicit_methods()) {
            const std::span<const double> s = shifted ? std::span<const double>(shift) : std::span<const double>();
            const std::string what = std::string(data_type_name(type)) + (shifted ? " shifted " : " ") +
                                     std::string(select_method_name(method));
            auto search = make(method);
            auto reference = make(method);
            ASSERT_TRUE(search && reference);
            for (int tile_number = 0; tile_number < 4; ++tile_number) {
              const int slot = tile_number % 2;
              io::Tile tile(type, kPixels, scene_bands, {0, 1}, {0, 1}, search->tile_allocator());
              fill_random_samples(tile.as<T>(), rng);
              auto queries =
                  std::async(std::launch::async, [&] { return search->gather(slot, tile, pixel, bands, s); }).get();
              ASSERT_TRUE(queries.ok()) << queries.error().line();
              std::vector<float> want_rows(static_cast<std::size_t>(rows * dims)), got_rows(want_rows.size());
              classify::gather_queries(tile, pixel, bands, s, want_rows.data());
              ASSERT_TRUE(search->copy_queries(*queries, rows * dims, got_rows.data()).ok());
              ASSERT_EQ(std::memcmp(got_rows.data(), want_rows.data(), want_rows.size() * 4), 0) << what;
              TopK got(rows, 5, search->list_memory()), want(rows, 5), got_plain(rows, 5, search->list_memory()),
                  want_plain(rows, 5);
              ASSERT_TRUE(
                  search->search_sequence(*queries, rows, static_cast<int>(shards.size()), shard_chunk, got).ok());
              for (int step = 0; step < static_cast<int>(shards.size()); ++step)
                ASSERT_TRUE(reference->search(want_rows.data(), rows, *shard_chunk(step), want).ok());
              expect_equal(got, want, what + " sequence");
              const TrainingChunk whole{train.data(), 700, dims, 0};
              ASSERT_TRUE(search->search(*queries, rows, whole, got_plain).ok());
              ASSERT_TRUE(reference->search(want_rows.data(), rows, whole, want_plain).ok());
              expect_equal(got_plain, want_plain, what + " plain");
            }
          }
      }
    });
}

// The value that rules a pixel out when a used band holds it: a narrow type's ignore
// value when it is one of the type's values, an f32 scene's as a float.
template <class T>
std::optional<T> ignore_target(DataType type, std::optional<double> ignore) {
  if constexpr (std::is_integral_v<T>) {
    const auto target = classify::narrow_ignore_target(type, ignore);
    return target ? std::optional<T>(static_cast<T>(*target)) : std::nullopt;
  } else {
    return ignore ? std::optional<T>(classify::float_ignore_value(ignore)) : std::nullopt;
  }
}

// QueryTiles' path for u8/i16/u16 and f32 scenes: list_and_gather(), from another
// thread and slots 0, 1, 0, 1, lists exactly valid_pixels' pixels and gives exactly the
// host's gather_queries rows, for ignore values that are one of the type's values
// (planted in used bands, which rule a pixel out, and in an unused one, which does
// not), absent, fractional or out of range, and for f32 NaN and infinities in used and
// unused bands; the last tile has no valid pixel at all.
inline void expect_listed_tiles_equal_host_lists(const SearchFactory& make, std::int64_t dims) {
  constexpr std::int64_t kPixels = 3001;
  classify::BandSelection selection;
  selection.scene_bands = dims + 3;
  for (std::int64_t b = 0; b < selection.scene_bands; ++b)  // every scene band but three
    if (b != 1 && b != dims / 2 && b != selection.scene_bands - 1) selection.bands.push_back(b);
  std::vector<double> shift(static_cast<std::size_t>(dims));
  for (std::size_t f = 0; f < shift.size(); ++f) shift[f] = 1000.0 + static_cast<double>(f) / 3.0;
  for (const auto type : kGatheredTypes)
    visit_data_type(type, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (kGatheredType<T>) {
        std::mt19937 rng(static_cast<unsigned>(type) + 7);
        const double ends[] = {double{std::numeric_limits<T>::lowest()}, double{std::numeric_limits<T>::max()}};
        for (const std::optional<double> ignore : {std::optional<double>{}, std::optional<double>{7.0}, {7.5}, {1e6},
                                                   {ends[0]}, {ends[1]}}) {
          const auto target = ignore_target<T>(type, ignore);
          auto search = make(SelectMethod::fast);
          ASSERT_TRUE(search);
          for (int tile_number = 0; tile_number < 4; ++tile_number) {
            const int slot = tile_number % 2;
            const std::string what = std::string(data_type_name(type)) + " ignore " +
                                     (ignore ? std::to_string(*ignore) : std::string("none")) + " tile " +
                                     std::to_string(tile_number);
            io::Tile tile(type, kPixels, selection.scene_bands, {0, 1}, {0, 1}, search->tile_allocator());
            auto values = tile.as<T>();
            fill_random_samples(values, rng);
            for (std::int64_t p = 0; p < kPixels; ++p) {
              T* in = values.data() + p * selection.scene_bands;
              T& used = in[selection.bands[static_cast<std::size_t>(p % dims)]];
              if (target && (p % 13 == 4 || tile_number == 3)) used = *target;
              if (target && p % 17 == 2) in[1] = *target;  // an unused band: still valid
              if constexpr (std::is_floating_point_v<T>) {
                const T not_finite[] = {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity(),
                                        -std::numeric_limits<T>::infinity()};
                if (p % 19 == 5) used = not_finite[p % 3];
                if (p % 23 == 6) in[1] = not_finite[p % 3];  // an unused band: still valid
              }
            }
            const std::span<const double> s = tile_number % 2 ? std::span<const double>(shift) : std::span<const double>();
            std::vector<std::int64_t> got_pixel, want_pixel;
            std::vector<std::uint8_t> valid;
            auto queries = std::async(std::launch::async, [&] {
                             return search->list_and_gather(slot, tile, selection, ignore, s, got_pixel);
                           }).get();
            ASSERT_TRUE(queries.ok()) << queries.error().line();
            const auto rows = classify::valid_pixels(tile, selection, ignore, valid, want_pixel);
            ASSERT_EQ(got_pixel, want_pixel) << what;
            if (target) {  // the planted pixels are out
              ASSERT_LE(rows, tile_number == 3 ? 0 : kPixels - kPixels / 13) << what;
            }
            std::vector<float> want_rows(static_cast<std::size_t>(rows * dims)), got_rows(want_rows.size());
            classify::gather_queries(tile, want_pixel, selection.bands, s, want_rows.data());
            ASSERT_TRUE(search->copy_queries(*queries, rows * dims, got_rows.data()).ok());
            ASSERT_EQ(std::memcmp(got_rows.data(), want_rows.data(), want_rows.size() * 4), 0) << what;
          }
        }
      }
    });
}

}  // namespace hb::knn::test
