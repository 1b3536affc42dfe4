// Pinned host memory kept for reuse within the process. Pinning is slow (the driver
// locks every page: about 0.6 s a GB), and a job makes the same buffers for every scene
// (tiles read ahead, KNN's running lists, staging for uploads); the pool hands a freed
// block to the next request it fits instead of unpinning and pinning again.
#pragma once

#include <cstddef>

namespace hb::cuda {

// Pinned memory of at least `bytes`, from the pool or the driver; nullptr when none
// can be pinned.
void* pinned_allocate(std::size_t bytes);
// Back to the pool (blocks beyond its idle limit are unpinned, the oldest first).
void pinned_free(void* block);
// True for a block pinned_allocate handed out and not yet freed.
bool pinned_owns(const void* block);

// What the process has pinned so far: the driver locks every page of a new block (and
// unlocks it again at exit), so a command's fixed seconds grow with `bytes`.
struct PinnedTotals {
  std::size_t bytes = 0;  // pinned by the driver, reused blocks not counted again
  int blocks = 0;
  double seconds = 0.0;   // in cudaMallocHost
};
PinnedTotals pinned_totals();

}  // namespace hb::cuda
