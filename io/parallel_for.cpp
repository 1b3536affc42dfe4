#include "io/parallel_for.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace hb::io {
namespace {

int cores() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

std::atomic<int> g_threads{0};  // 0: not set, every core

}  // namespace

int host_threads() {
  const int set = g_threads.load(std::memory_order_relaxed);
  return set > 0 ? set : cores();
}

void share_host_threads(int ranks_on_host) {
  g_threads.store(ranks_on_host > 0 ? std::max(1, cores() / ranks_on_host) : 0, std::memory_order_relaxed);
}

void parallel_for(std::int64_t n, std::int64_t min_chunk, const std::function<void(std::int64_t, std::int64_t)>& fn) {
  if (n <= 0) return;
  const std::int64_t most = std::max<std::int64_t>(1, n / std::max<std::int64_t>(min_chunk, 1));
  const auto workers = static_cast<int>(std::min<std::int64_t>(host_threads(), most));
  if (workers <= 1) {
    fn(0, n);
    return;
  }
  std::vector<std::jthread> pool;
  pool.reserve(static_cast<std::size_t>(workers - 1));
  const auto range = [&](int w) { return std::pair{n * w / workers, n * (w + 1) / workers}; };
  for (int w = 1; w < workers; ++w)
    pool.emplace_back([&fn, r = range(w)] { fn(r.first, r.second); });
  const auto own = range(0);
  fn(own.first, own.second);
}

}  // namespace hb::io
