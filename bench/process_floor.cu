// The floor of any one-process GPU command: a process that starts a CUDA context,
// pins MB megabytes of host memory (0 for none) and exits. The shell times the whole
// process; this prints what it spent inside: the context's start and the pinning (the
// driver locks every page, and unlocks it again at exit).
//   bench_process_floor [MB]
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t megabytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 0;
  const auto t0 = std::chrono::steady_clock::now();
  if (cudaFree(nullptr) != cudaSuccess) {
    std::printf("bench_process_floor: no CUDA device\n");
    return 0;
  }
  const double context = seconds_since(t0);
  const auto t1 = std::chrono::steady_clock::now();
  void* pinned = nullptr;
  if (megabytes > 0 && cudaMallocHost(&pinned, megabytes << 20) == cudaSuccess)
    std::memset(pinned, 0, megabytes << 20);  // written, as a command's buffers are
  std::printf("context %.3f s, %zu MB pinned and written %.3f s\n", context, megabytes, seconds_since(t1));
  return 0;  // the context and the pinned pages go with the process
}
