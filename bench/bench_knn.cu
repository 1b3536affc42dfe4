// KNN search on one GPU through the KnnSearch seam (pinned host queries in, pinned
// host lists out, both timed):
// N = 10^5 training rows (--train: a scene's few thousand), d in {32, 224}, k in {1, 10, 100, 1024, 4096}, for every
// --select method (tensor: TF32 tensor-core products, exact lists). Rates are queries/s and GFLOP/s counted as 2 * Q * N * d, against
// the cuBLAS SGEMM rate measured in the same run (8192^3, plain FP32) and the SGEMM
// of the search's own shape. Q grows 4x from 2048 while a run takes under a quarter of
// the per-case time budget, up to 10^6; rows below 10^6 say so (the rate is per query,
// so it scales). (`auto` runs what the command's auto runs: src/knn/select.hpp.)
//   bench_knn [--train N] [--queries Q] [--budget SECONDS] [--dims 32,224] [--k 1,10,...] [--slab-mb 32,128]
//             [--slab-rows 1056,4224] [--select fast,tensor,bitonic,kmin,auto] [--scene S --training T.h5]
//             [--chunk-bound-from-k K] [--chunk-samples S]
// (--scene, --training: the queries are the scene's valid pixels and the training rows
//  the file's, both shifted by the training mean as `hyperbatch knn` prepares them, in
//  place of uniform values; d is the file's)
// (--slab-mb, --slab-rows: one fast and one tensor row per inner-product slab size and
//  row count (tensor with --slab-mb: no L2-sized column blocks);
//  default the search's own; --select: the methods to run, default all of them;
//  --chunk-bound-from-k, --chunk-samples: tensor's whole-chunk bound, from which k and
//  sampled from how many training rows)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/timing.cuh"
#include "io/cube.hpp"
#include "io/units.hpp"
#include "src/classify/features.hpp"
#include "src/classify/training_file.hpp"
#include "src/knn/prepared_training.hpp"
#include "src/knn/search.hpp"

namespace {

using namespace hb::knn;

constexpr std::int64_t kPilot = 2048;
constexpr double kListBytesCap = 4e9;  // host lists: Q * k * 12 bytes at most

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Uniform values in [-1, 1) from a xorshift stream: cheap for 10^8 values.
void fill_random(float* out, std::size_t n, std::uint64_t seed) {
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::size_t i = 0; i < n; ++i) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    out[i] = static_cast<float>(static_cast<double>(s >> 40) / static_cast<double>(1ull << 23) - 1.0);
  }
}

// cuBLAS SGEMM rate in GFLOP/s for C[m x n] = A[m x kk] B[kk x n], warm, mean of reps.
double sgemm_gflops(cublasHandle_t blas, int m, int n, int kk, int reps) {
  float *a, *b, *c;
  CHECK_CUDA(cudaMalloc(&a, sizeof(float) * static_cast<std::size_t>(m) * kk));
  CHECK_CUDA(cudaMalloc(&b, sizeof(float) * static_cast<std::size_t>(kk) * n));
  CHECK_CUDA(cudaMalloc(&c, sizeof(float) * static_cast<std::size_t>(m) * n));
  CHECK_CUDA(cudaMemset(a, 0, sizeof(float) * static_cast<std::size_t>(m) * kk));
  CHECK_CUDA(cudaMemset(b, 0, sizeof(float) * static_cast<std::size_t>(kk) * n));
  const float one = 1.0f, zero = 0.0f;
  const auto run = [&] { cublasSgemm(blas, CUBLAS_OP_T, CUBLAS_OP_N, m, n, kk, &one, a, kk, b, kk, &zero, c, m); };
  const double ms = hb::bench::time_ms(run, reps);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return 2.0 * m * n * kk / (ms * 1e-3) / 1e9;
}

std::vector<int> parse_list(const char* text) {
  std::vector<int> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::atoi(item.c_str()));
  return out;
}

std::vector<SelectMethod> parse_methods(const char* text) {
  std::vector<SelectMethod> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const auto method = select_method_from_name(item);
    if (!method) {
      std::fprintf(stderr, "bench_knn: --select: unknown method '%s' (auto|kmin|bitonic|fast|tensor)\n", item.c_str());
      std::exit(2);
    }
    out.push_back(*method);
  }
  return out;
}

// The search's inputs: queries and training rows, `dims` wide.
struct Inputs {
  std::vector<float> queries;  // pinned in place once a GPU is found
  std::int64_t query_count = 0;
  std::vector<float> train;
  std::int64_t train_rows = 0;
  int dims = 0;
};

Inputs uniform_inputs(std::int64_t queries, std::int64_t train_rows, int max_dims) {
  Inputs in;
  in.query_count = queries;
  in.train_rows = train_rows;
  in.dims = max_dims;
  in.queries.resize(static_cast<std::size_t>(queries) * max_dims);
  fill_random(in.queries.data(), in.queries.size(), 1);
  in.train.resize(static_cast<std::size_t>(train_rows) * max_dims);
  fill_random(in.train.data(), in.train.size(), 2);
  return in;
}

// A scene's valid pixels (up to `max_queries`) and a training file's rows, shifted by the
// training mean as `hyperbatch knn` prepares them (src/knn/prepared_training.hpp).
hb::Result<Inputs> file_inputs(const std::string& scene_path, const std::string& training_path,
                               std::int64_t max_queries) {
  auto file = hb::classify::read_training_file(training_path);
  if (!file) return file.error();
  auto prepared = PreparedTraining::prepare(*file->features, Metric::euclidean, std::int64_t{1} << 40);
  if (!prepared) return prepared.error();
  prepared->set_chunk_rows(prepared->count());
  auto chunk = prepared->chunk(0);
  if (!chunk) return chunk.error();
  hb::io::set_scene_units(hb::io::Units::physical);  // as the command reads scenes by default
  auto cube = hb::io::open_cube(scene_path);
  if (!cube) return cube.error();
  const auto& info = (*cube)->info();
  const auto selection = hb::classify::select_good_bands(info);
  if (selection.dims() != prepared->dims())
    return hb::Error{hb::ErrorKind::usage, scene_path, "bands", "the scene's bands are not the training file's"};
  const std::int64_t lines = std::min(info.shape.lines, (max_queries + info.shape.samples - 1) / info.shape.samples);
  auto tile = (*cube)->read_tile({0, lines});
  if (!tile) return tile.error();
  Inputs in;
  in.dims = static_cast<int>(prepared->dims());
  in.queries.resize(static_cast<std::size_t>(tile->pixels() * in.dims));
  std::vector<std::uint8_t> valid;
  std::vector<std::int64_t> pixel;
  const std::int64_t valid_count = hb::classify::pack_valid_queries(
      *tile, selection, info.meta.data_ignore_value, prepared->shift(), in.queries.data(), valid, pixel);
  in.query_count = std::min(max_queries, valid_count);
  in.train.assign(chunk->features, chunk->features + chunk->count * in.dims);
  in.train_rows = chunk->count;
  return in;
}

struct Case {
  int dims;
  int k;
  SelectMethod method;
};

// Searches the first q queries; returns wall seconds (lists to the host included).
double timed_search(KnnSearch& search, const float* queries, std::int64_t q, const TrainingChunk& chunk, int k) {
  // In the search's list memory (pinned, as the scene passes make them), so the lists
  // come back at link speed, slab by slab.
  TopK running(q, k, search.list_memory());
  const auto t0 = std::chrono::steady_clock::now();
  const hb::Status status = search.search(queries, q, chunk, running);
  const double s = seconds_since(t0);
  if (!status.ok()) {
    std::fprintf(stderr, "search failed: %s\n", status.error().line().c_str());
    return -1.0;
  }
  return s;
}

// Pairs of the first q lists where `search` and a fresh fast search differ (distance
// bits or index): the tensor method must give fast's lists exactly at scale too.
std::int64_t pairs_unlike_fast(KnnSearch& search, const float* queries, std::int64_t q, const TrainingChunk& chunk,
                               int k) {
  auto fast = make_knn_search(hb::BackendKind::cuda, {Metric::euclidean, SelectMethod::fast, std::int64_t{64} << 20});
  if (!fast.ok()) return -1;
  TopK got(q, k), want(q, k);
  if (!search.search(queries, q, chunk, got).ok() || !(*fast)->search(queries, q, chunk, want).ok()) return -1;
  std::int64_t differ = 0;
  for (std::int64_t r = 0; r < q; ++r)
    for (int j = 0; j < k; ++j)
      differ += got.indices(r)[j] != want.indices(r)[j] ||
                std::memcmp(got.distances(r) + j, want.distances(r) + j, sizeof(float)) != 0;
  return differ;
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t train_rows = 100000;
  std::int64_t max_queries = 1000000;
  double budget = 0.6;
  std::vector<int> dims_list{32, 224}, k_list{1, 10, 100, 1024, 4096};
  std::vector<int> slab_mb{0};    // fast, tensor: inner-product slab sizes to sweep (0 = the default)
  std::vector<int> slab_rows{0};  // fast, tensor: slab rows to sweep (0 = the default)
  std::vector<SelectMethod> methods{SelectMethod::fast, SelectMethod::tensor, SelectMethod::bitonic,
                                    SelectMethod::kmin};
  std::string scene_path, training_path;  // in place of uniform values
  int chunk_bound_from_k = 0, chunk_samples = 0;  // tensor: the search's own where 0
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!std::strcmp(argv[a], "--train")) train_rows = std::atoll(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--queries")) max_queries = std::atoll(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--budget")) budget = std::atof(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--dims")) dims_list = parse_list(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--k")) k_list = parse_list(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--slab-mb")) slab_mb = parse_list(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--slab-rows")) slab_rows = parse_list(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--select")) methods = parse_methods(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--scene")) scene_path = argv[a + 1];
    else if (!std::strcmp(argv[a], "--training")) training_path = argv[a + 1];
    else if (!std::strcmp(argv[a], "--chunk-bound-from-k")) chunk_bound_from_k = std::atoi(argv[a + 1]);
    else if (!std::strcmp(argv[a], "--chunk-samples")) chunk_samples = std::atoi(argv[a + 1]);
  }
  if (scene_path.empty() != training_path.empty()) {
    std::fprintf(stderr, "bench_knn: --scene and --training go together\n");
    return 2;
  }
  Inputs inputs;
  if (scene_path.empty()) {
    inputs = uniform_inputs(max_queries, train_rows, *std::max_element(dims_list.begin(), dims_list.end()));
  } else {
    auto read = file_inputs(scene_path, training_path, max_queries);
    if (!read) {
      std::fprintf(stderr, "bench_knn: %s\n", read.error().line().c_str());
      return 1;
    }
    inputs = std::move(*read);
    dims_list = {inputs.dims};
    train_rows = inputs.train_rows;
    max_queries = inputs.query_count;
    std::printf("# %lld queries of %d features from %s, %lld training rows from %s\n",
                static_cast<long long>(max_queries), inputs.dims, scene_path.c_str(),
                static_cast<long long>(train_rows), training_path.c_str());
  }
  if (hb::cuda_device_count() == 0) {
    std::printf("bench_knn: no CUDA device\n");
    return 0;
  }
  // Pinned: the host-to-device copy runs at link speed.
  const float* queries = inputs.queries.data();
  CHECK_CUDA(cudaHostRegister(inputs.queries.data(), sizeof(float) * inputs.queries.size(), cudaHostRegisterDefault));
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  cublasHandle_t blas;
  cublasCreate(&blas);
  const double peak = sgemm_gflops(blas, 8192, 8192, 8192, 5);
  std::printf("# bench_knn on %s: N = %lld training rows, %s; SGEMM 8192^3 (FP32, no TF32) = %.0f GFLOP/s\n",
              prop.name, static_cast<long long>(train_rows),
              scene_path.empty() ? "uniform values" : ("queries from " + scene_path).c_str(), peak);

  std::printf("%5s %5s %8s %8s %9s %12s %10s %8s %8s %s\n", "d", "k", "select", "Q", "seconds", "queries/s",
              "GFLOP/s", "%peak", "xfloor", "note");
  for (const int dims : dims_list) {
    const TrainingChunk chunk{inputs.train.data(), train_rows, dims, 0};
    // The SGEMM of the search's own shape (training rows x 8192 queries): the floor.
    const double shape_gflops = sgemm_gflops(blas, static_cast<int>(train_rows), 8192, dims, 3);
    std::printf("# d = %d: SGEMM %lld x 8192 x %d = %.0f GFLOP/s (the arithmetic floor below uses it)\n", dims,
                static_cast<long long>(train_rows), dims, shape_gflops);
    for (const int k : k_list) {
      const auto cap = static_cast<std::int64_t>(std::min<double>(max_queries, kListBytesCap / (12.0 * k)));
      std::vector<std::tuple<SelectMethod, int, int>> runs;
      for (const auto method : methods) {
        if (method != SelectMethod::fast && method != SelectMethod::tensor) runs.emplace_back(method, 0, 0);
        else
          for (const int mb : slab_mb)
            for (const int rows : slab_rows) runs.emplace_back(method, mb, rows);
      }
      for (const auto& [method, mb, rows] : runs) {
        SearchOptions options{Metric::euclidean, method, std::int64_t{64} << 20};
        options.fast_slab_bytes = std::int64_t{mb} << 20;
        options.fast_slab_rows = rows;
        options.tensor_chunk_bound_from_k = chunk_bound_from_k;
        options.tensor_chunk_samples = chunk_samples;
        auto made = make_knn_search(hb::BackendKind::cuda, options);
        if (!made.ok()) {
          std::fprintf(stderr, "%s\n", made.error().line().c_str());
          return 1;
        }
        auto& search = **made;
        // Warm: uploads the training set and loads the kernels.
        if (timed_search(search, queries, std::min<std::int64_t>(256, cap), chunk, k) < 0) continue;
        // From a 2048-query pilot, 4x more queries while a run takes under a quarter of
        // the budget (small runs understate the rate: fixed costs), up to Q.
        const double method_budget =
            method == SelectMethod::fast || method == SelectMethod::tensor ? 2.0 * budget : budget;
        std::int64_t q = std::min(kPilot, cap);
        double s = timed_search(search, queries, q, chunk, k);
        while (s >= 0 && q < cap && s < method_budget / 4) {
          q = std::min(cap, q * 4);
          s = timed_search(search, queries, q, chunk, k);
        }
        if (s < 0) continue;
        const double flop = 2.0 * static_cast<double>(q) * train_rows * dims;
        const double gflops = flop / s / 1e9;
        const double floor_s = flop / (shape_gflops * 1e9);
        const std::string slab = (mb > 0 ? "slab " + std::to_string(mb) + " MiB; " : "") +
                                 (rows > 0 ? "slab rows " + std::to_string(rows) + "; " : "");
        std::printf("%5d %5d %8s %8lld %9.3f %12.4g %10.0f %7.1f%% %8.2f %s%s\n", dims, k,
                    std::string(select_method_name(method)).c_str(), static_cast<long long>(q), s, q / s, gflops,
                    100.0 * gflops / peak, s / floor_s, slab.c_str(),
                    q < max_queries ? "Q scaled down (rate per query)" : "");
        if (method == SelectMethod::tensor) {
          const std::int64_t checked = std::min<std::int64_t>(q, 8192);
          std::printf("# d = %d, k = %d: tensor lists against fast's, %lld queries: %lld pairs differ\n", dims, k,
                      static_cast<long long>(checked),
                      static_cast<long long>(pairs_unlike_fast(search, queries, checked, chunk, k)));
        }
        std::fflush(stdout);
      }
    }
  }
  cudaHostUnregister(inputs.queries.data());
  cublasDestroy(blas);
  return 0;
}
