#include "src/base/pinned_pool.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <list>
#include <map>
#include <mutex>

namespace hb::cuda {
namespace {

// Idle pinned memory kept at most; enough for a scene pass's tiles and lists.
constexpr std::size_t kIdleLimitBytes = std::size_t{8} << 30;

class PinnedPool {
 public:
  void* allocate(std::size_t bytes) {
    bytes = std::max<std::size_t>(bytes, 1);
    {
      const std::lock_guard lock(mutex_);
      // The smallest idle block that fits without wasting more than half of it.
      auto best = idle_.end();
      for (auto it = idle_.begin(); it != idle_.end(); ++it)
        if (it->bytes >= bytes && it->bytes / 2 <= bytes && (best == idle_.end() || it->bytes < best->bytes)) best = it;
      if (best != idle_.end()) {
        void* block = best->block;
        idle_bytes_ -= best->bytes;
        live_[block] = best->bytes;
        idle_.erase(best);
        return block;
      }
    }
    void* block = nullptr;
    const auto start = std::chrono::steady_clock::now();
    // Not huge pages registered with cudaHostRegister: on a fresh host they pinned 1 GB
    // in 0.2-0.4 s against 0.6, but with the page cache full of scenes the kernel compacts
    // memory to make them: a rank of an archive run pinned its 0.37 GB in 0.54 s against
    // 0.28 s, and each of four ranks in 1.1-2.0 s (docs/PERFORMANCE.md, "Archive throughput").
    if (cudaMallocHost(&block, bytes) != cudaSuccess) {
      cudaGetLastError();
      return nullptr;
    }
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    const std::lock_guard lock(mutex_);
    live_[block] = bytes;
    totals_.bytes += bytes;
    totals_.blocks += 1;
    totals_.seconds += took.count();
    return block;
  }

  void free(void* block) {
    std::list<Idle> released;
    {
      const std::lock_guard lock(mutex_);
      const auto found = live_.find(block);
      if (found == live_.end()) return;
      idle_.push_back({block, found->second});
      idle_bytes_ += found->second;
      live_.erase(found);
      while (idle_bytes_ > kIdleLimitBytes && !idle_.empty()) {
        idle_bytes_ -= idle_.front().bytes;
        released.splice(released.end(), idle_, idle_.begin());
      }
    }
    for (const auto& r : released) cudaFreeHost(r.block);
  }

  PinnedTotals totals() {
    const std::lock_guard lock(mutex_);
    return totals_;
  }

  bool owns(const void* block) {
    const std::lock_guard lock(mutex_);
    return live_.count(const_cast<void*>(block)) != 0;
  }

 private:
  struct Idle {
    void* block;
    std::size_t bytes;
  };
  std::mutex mutex_;
  std::list<Idle> idle_;  // oldest first
  std::size_t idle_bytes_ = 0;
  std::map<void*, std::size_t> live_;
  PinnedTotals totals_;
};

// Never destroyed: blocks may be freed by other static destructors, and the process's
// end unpins everything anyway.
PinnedPool& pool() {
  static auto* pool = new PinnedPool;
  return *pool;
}

}  // namespace

void* pinned_allocate(std::size_t bytes) { return pool().allocate(bytes); }
void pinned_free(void* block) { pool().free(block); }
bool pinned_owns(const void* block) { return pool().owns(block); }
PinnedTotals pinned_totals() { return pool().totals(); }

}  // namespace hb::cuda
