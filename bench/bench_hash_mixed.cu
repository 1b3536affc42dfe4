// Dynamic hash benchmark (as the GLHT paper's, Zhang and Sun 2019): concurrent mixes
// [insert, erase, find %] of [20,20,60] and [40,40,20] over key ranges 10^2..10^5 with
// 10^5 operations, and 10^8 operations over a 10^8 key range; the table (capacity 1.25 x range) starts with half
// the range present. GPU hopscotch (one launch) against the sharded CPU table on every
// host core and std::unordered_map under one mutex. --quick: 10^7 for the large case.
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>

#include "bench/hash_bench_common.hpp"
#include "kernels/hash/gpu_table.hpp"

namespace hb::bench {
namespace {

constexpr std::uint64_t kSalt = 0xd1ce;

struct Mix {
  const char* name;
  int insert_pct, erase_pct;
};

std::vector<hash::Op> make_ops(std::size_t n, std::size_t range, const Mix& mix, std::uint64_t seed) {
  std::vector<hash::Op> ops(n);
  hash::parallel_ranges(n, 0, [&](std::size_t b, std::size_t e) {
    std::mt19937_64 rng(seed + b);
    for (std::size_t i = b; i < e; ++i) {
      const std::uint64_t r = rng();
      const int pct = static_cast<int>((r >> 48) % 100);
      const auto kind = pct < mix.insert_pct ? hash::OpKind::insert
                        : pct < mix.insert_pct + mix.erase_pct ? hash::OpKind::erase
                                                                 : hash::OpKind::find;
      ops[i] = {bench_key(r % range, kSalt), static_cast<std::uint32_t>(i), kind};
    }
  });
  return ops;
}

double gpu_run(const std::vector<hash::Op>& ops, std::size_t range, const std::vector<std::uint64_t>& prefill) {
  const auto capacity = static_cast<std::uint32_t>(std::max<double>(1024, 1.25 * double(range)));
  auto table = hash::GpuHopscotchTable::create(capacity);
  if (!table) return -1;
  hash::Op* d_ops = nullptr;
  hash::OpResult* d_results = nullptr;
  std::uint64_t* d_keys = nullptr;
  HB_CUDA_CHECK(cudaMalloc(&d_ops, ops.size() * sizeof(hash::Op)));
  HB_CUDA_CHECK(cudaMalloc(&d_results, std::max(ops.size(), prefill.size()) * sizeof(hash::OpResult)));
  HB_CUDA_CHECK(cudaMalloc(&d_keys, std::max<std::size_t>(1, prefill.size()) * 8));
  HB_CUDA_CHECK(cudaMemcpy(d_ops, ops.data(), ops.size() * sizeof(hash::Op), cudaMemcpyHostToDevice));
  HB_CUDA_CHECK(cudaMemcpy(d_keys, prefill.data(), prefill.size() * 8, cudaMemcpyHostToDevice));
  (void)table->insert_device(d_keys, nullptr, d_results, prefill.size());
  const double s = device_seconds([&] { (void)table->run_device(d_ops, d_results, ops.size()); });
  cudaFree(d_ops);
  cudaFree(d_results);
  cudaFree(d_keys);
  return s;
}

double sharded_run(const std::vector<hash::Op>& ops, std::size_t range, const std::vector<std::uint64_t>& prefill) {
  hash::ShardedCpuTable table(static_cast<std::uint64_t>(std::max<double>(1024, 1.25 * double(range))),
                              range < 100'000 ? 64 : 4096);
  hash::parallel_ranges(prefill.size(), 0, [&](std::size_t b, std::size_t e) {
    for (std::size_t i = b; i < e; ++i) (void)table.apply({prefill[i], 0, hash::OpKind::insert});
  });
  return seconds_of([&] { (void)table.run(ops); });
}

double locked_map_run(std::span<const hash::Op> ops, const std::vector<std::uint64_t>& prefill) {
  std::unordered_map<std::uint64_t, std::uint32_t> map;
  map.reserve(prefill.size() * 2);
  for (const auto k : prefill) map.emplace(k, 0);
  std::mutex m;
  return seconds_of([&] {
    hash::parallel_ranges(ops.size(), 0, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) {
        const std::lock_guard lock(m);
        if (ops[i].kind == hash::OpKind::insert) map.emplace(ops[i].key, ops[i].value);
        else if (ops[i].kind == hash::OpKind::erase) map.erase(ops[i].key);
        else (void)map.count(ops[i].key);
      }
    });
  });
}

void one_case(const Mix& mix, std::size_t range, std::size_t n, bool large) {
  const auto ops = make_ops(n, range, mix, range * 31 + n);
  const auto prefill = host_keys(range / 2, kSalt);
  const std::string axis = std::to_string(range);
  const int reps = large ? 1 : 3;
  double g[3] = {0, 0, 0}, c[3] = {0, 0, 0};
  for (int r = 0; r < reps; ++r) g[r] = gpu_run(ops, range, prefill);
  for (int r = 0; r < reps; ++r) c[r] = sharded_run(ops, range, prefill);
  const std::string bench = std::string("mix") + mix.name;
  print_row(bench.c_str(), "gpu hopscotch", double(n), axis.c_str(), large ? g[0] : median3(g[0], g[1], g[2]));
  print_row(bench.c_str(), "cpu sharded (all cores)", double(n), axis.c_str(), large ? c[0] : median3(c[0], c[1], c[2]));
  // The locked map serialises everything: its large case runs the first 10^7 operations.
  const std::size_t map_ops = std::min<std::size_t>(n, 10'000'000);
  print_row(bench.c_str(), "unordered_map+mutex", double(map_ops), axis.c_str(),
            locked_map_run(std::span(ops).first(map_ops), prefill), map_ops < n ? "first 10^7 ops" : "");
}

}  // namespace
}  // namespace hb::bench

int main(int argc, char** argv) {
  using namespace hb::bench;
  const bool quick = quick_mode(argc, argv);
  print_title("dynamic hash benchmark", "; mix = [insert,erase,find] %");
  (void)gpu_run(make_ops(1000, 100, {"warmup", 20, 20}, 1), 100, {});
  print_header("key range");
  const Mix mixes[] = {{"[20,20,60]", 20, 20}, {"[40,40,20]", 40, 40}};
  for (const Mix& mix : mixes) {
    for (const std::size_t range : {100, 1000, 10000, 100000}) one_case(mix, range, 100'000, false);
    const std::size_t big = quick ? 10'000'000 : 100'000'000;
    one_case(mix, big, big, true);
  }
  return 0;
}
