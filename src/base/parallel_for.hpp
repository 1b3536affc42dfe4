// Data-parallel loops over host threads, for the per-pixel passes that feed the GPU
// (widening, feature extraction, packing): one thread cannot keep up with a GPU that
// classifies millions of pixels a second. The ranges run on the process's worker pool
// (worker_pool.hpp), so a call starts no thread.
#pragma once

#include <cstdint>
#include <functional>

namespace hb {

// Threads a parallel loop may use: the CPUs this process may run on, shared among the
// ranks of this host unless the launcher bound each rank to CPUs of its own (under
// mpirun's default binding to one core, that is one thread: use --bind-to none or
// --map-by ...:PE=N, or srun --cpus-per-task, to give ranks cores).
int host_threads();
// Set once a rank knows how many ranks share its host.
void share_host_threads(int ranks_on_host);

// Calls fn(begin, end) over disjoint ranges covering [0, n), in parallel when n is at
// least 2 * min_chunk; each range holds at least min_chunk items (except a short one).
void parallel_for(std::int64_t n, std::int64_t min_chunk, const std::function<void(std::int64_t, std::int64_t)>& fn);

}  // namespace hb
