// Static hash benchmark (as the GLHT paper's, Zhang and Sun 2019): bulk build then bulk
// find of n distinct keys at load 0.8 (capacity = n / 0.8 homes), n = 10^6, 10^7, 10^8,
// for the GPU hopscotch table, a GPU linear-probing table with the same slots and hash,
// the sharded CPU table on every host core and (n <= 10^7) the one-thread CPU table. --quick: n = 10^6 only.
#include <string>

#include "bench/hash_bench_common.hpp"
#include "bench/linear_probing.cuh"
#include "kernels/hash/gpu_table.hpp"
#include "src/hash/cpu_table.hpp"

namespace hb::bench {
namespace {

constexpr std::uint64_t kSalt = 0x5eed;

// Keys the table reports missing after a find (value not the key's index).
__global__ void count_misses(const hash::OpResult* results, std::size_t n, unsigned long long* misses) {
  for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x)
    if (results[i].status != hash::OpStatus::found || results[i].value != i) atomicAdd(misses, 1ull);
}

unsigned long long misses_of(const hash::OpResult* d_results, std::size_t n, unsigned long long* d_count) {
  HB_CUDA_CHECK(cudaMemset(d_count, 0, sizeof(unsigned long long)));
  count_misses<<<1024, 256>>>(d_results, n, d_count);
  unsigned long long h = 0;
  HB_CUDA_CHECK(cudaMemcpy(&h, d_count, sizeof h, cudaMemcpyDeviceToHost));
  return h;
}

void gpu_hopscotch(std::size_t n, std::uint32_t capacity, const std::uint64_t* d_keys, hash::OpResult* d_results,
                   unsigned long long* d_count, const std::string& axis) {
  auto table = hash::GpuHopscotchTable::create(capacity);
  if (!table) {
    std::printf("gpu hopscotch: %s\n", table.error().line().c_str());
    return;
  }
  const double build = device_seconds([&] { (void)table->insert_device(d_keys, nullptr, d_results, n); });
  const std::uint64_t stored = table->size() ? *table->size() : 0;
  print_row("build", "gpu hopscotch", double(n), axis.c_str(), build,
            ("unplaced " + std::to_string(n - stored)).c_str());
  double t[3];
  for (double& s : t) s = device_seconds([&] { (void)table->find_device(d_keys, d_results, n); });
  print_row("find", "gpu hopscotch", double(n), axis.c_str(), median3(t[0], t[1], t[2]),
            ("misses " + std::to_string(misses_of(d_results, n, d_count))).c_str());
}

void gpu_linear(std::size_t n, std::uint32_t capacity, const std::uint64_t* d_keys, const std::string& axis) {
  LinearProbingRef t{nullptr, nullptr, hash::slot_count(capacity), capacity};
  std::uint32_t* d_out = nullptr;
  HB_CUDA_CHECK(cudaMalloc(&t.keys, t.slots * 8));
  HB_CUDA_CHECK(cudaMalloc(&t.values, t.slots * 4));
  HB_CUDA_CHECK(cudaMalloc(&d_out, n * 4));
  HB_CUDA_CHECK(cudaMemset(t.keys, 0xff, t.slots * 8));
  const unsigned grid = 132 * 16;
  print_row("build", "gpu linear probing", double(n), axis.c_str(),
            device_seconds([&] { linear_insert<<<grid, 256>>>(t, d_keys, n); }));
  double s[3];
  for (double& x : s) x = device_seconds([&] { linear_find<<<grid, 256>>>(t, d_keys, d_out, n); });
  print_row("find", "gpu linear probing", double(n), axis.c_str(), median3(s[0], s[1], s[2]));
  cudaFree(t.keys);
  cudaFree(t.values);
  cudaFree(d_out);
}

void cpu_tables(std::size_t n, std::uint32_t capacity, const std::vector<std::uint64_t>& keys, const std::string& axis) {
  hash::ShardedCpuTable sharded(capacity);
  auto apply_all = [&](hash::OpKind kind) {
    hash::parallel_ranges(n, 0, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) (void)sharded.apply({keys[i], static_cast<std::uint32_t>(i), kind});
    });
  };
  print_row("build", "cpu sharded (all cores)", double(n), axis.c_str(), seconds_of([&] { apply_all(hash::OpKind::insert); }));
  print_row("find", "cpu sharded (all cores)", double(n), axis.c_str(), seconds_of([&] { apply_all(hash::OpKind::find); }));
  if (n > 10'000'000) return;
  hash::CpuHopscotchTable one(capacity);
  print_row("build", "cpu hopscotch (1 core)", double(n), axis.c_str(), seconds_of([&] {
              for (std::size_t i = 0; i < n; ++i) (void)one.insert(keys[i], static_cast<std::uint32_t>(i));
            }));
  std::uint64_t hits = 0;
  print_row("find", "cpu hopscotch (1 core)", double(n), axis.c_str(), seconds_of([&] {
              for (std::size_t i = 0; i < n; ++i) hits += one.find(keys[i]).status == hash::OpStatus::found;
            }));
}

}  // namespace
}  // namespace hb::bench

int main(int argc, char** argv) {
  using namespace hb::bench;
  const bool quick = quick_mode(argc, argv);
  print_title("static hash benchmark", ", load 0.8");
  {  // first launches pay for module loading: not part of any figure
    auto warm = hb::hash::GpuHopscotchTable::create(4096);
    const auto k = host_keys(1000, 1);
    if (warm) (void)warm->insert(k, std::vector<std::uint32_t>(k.size(), 0));
  }
  print_header("load");
  std::vector<std::size_t> sizes{1'000'000};
  if (!quick) sizes = {1'000'000, 10'000'000, 100'000'000};
  for (const std::size_t n : sizes) {
    const auto capacity = static_cast<std::uint32_t>(double(n) / 0.8);
    const auto keys = host_keys(n, kSalt);
    std::uint64_t* d_keys = nullptr;
    hb::hash::OpResult* d_results = nullptr;
    unsigned long long* d_count = nullptr;
    HB_CUDA_CHECK(cudaMalloc(&d_keys, n * 8));
    HB_CUDA_CHECK(cudaMalloc(&d_results, n * sizeof(hb::hash::OpResult)));
    HB_CUDA_CHECK(cudaMalloc(&d_count, 8));
    HB_CUDA_CHECK(cudaMemcpy(d_keys, keys.data(), n * 8, cudaMemcpyHostToDevice));
    const std::string axis = "0.8";
    gpu_hopscotch(n, capacity, d_keys, d_results, d_count, axis);
    gpu_linear(n, capacity, d_keys, axis);
    cudaFree(d_keys);
    cudaFree(d_results);
    cudaFree(d_count);
    cpu_tables(n, capacity, keys, axis);
  }
  return 0;
}
