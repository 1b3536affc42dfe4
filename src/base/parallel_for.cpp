#include "src/base/parallel_for.hpp"

#include "src/base/worker_pool.hpp"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <string>
#include <thread>

#include <sched.h>

namespace hb {
namespace {

int online_cpus() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

// The CPUs this process may run on: a launcher that binds ranks to cores narrows it.
int affinity_cpus() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? std::max(1, CPU_COUNT(&set)) : online_cpus();
}

// The affinity further capped by a cgroup CPU quota when one is set.
int allowed_cpus() {
  int count = affinity_cpus();
  std::ifstream quota_file("/sys/fs/cgroup/cpu.max");
  std::string quota;
  long long period = 0;
  if (quota_file >> quota >> period && quota != "max" && period > 0)
    count = static_cast<int>(std::min<long long>(count, std::max<long long>(1, (std::stoll(quota) + period - 1) / period)));
  return count;
}

std::atomic<int> g_threads{0};  // 0: not set, every allowed CPU

}  // namespace

int host_threads() {
  static const int available = allowed_cpus();
  const int set = g_threads.load(std::memory_order_relaxed);
  return set > 0 ? set : available;
}

void share_host_threads(int ranks_on_host) {
  const int allowed = allowed_cpus();
  // A rank bound to some CPUs by its launcher owns them; an unbound one shares the host.
  const bool bound = affinity_cpus() < online_cpus();
  g_threads.store(ranks_on_host > 0 && !bound ? std::max(1, allowed / ranks_on_host) : allowed,
                  std::memory_order_relaxed);
}

void parallel_for(std::int64_t n, std::int64_t min_chunk, const std::function<void(std::int64_t, std::int64_t)>& fn) {
  if (n <= 0) return;
  const std::int64_t most = std::max<std::int64_t>(1, n / std::max<std::int64_t>(min_chunk, 1));
  const auto workers = static_cast<int>(std::min<std::int64_t>(host_threads(), most));
  if (workers <= 1) {
    fn(0, n);
    return;
  }
  run_pieces(static_cast<unsigned>(workers), [&](unsigned w) { fn(n * w / workers, n * (w + 1) / workers); });
}

}  // namespace hb
