// The floor of any one-process GPU command: a process that starts a CUDA context,
// gets MB megabytes of host memory the GPU reads (0 for none), copies it to the device
// once and exits. The shell times the whole process; this prints what it spent inside:
// the context's start, the memory made and written, and the copy. HOW is how the memory
// is made:
//   pinned    cudaMallocHost, then written (the driver locks every page, and unlocks it
//             again at exit)
//   register  pageable memory given to cudaHostRegister, then written
//   huge      as register, on transparent huge pages (madvise MADV_HUGEPAGE)
//   pageable  written pageable memory, copied as it is (through the driver's staging)
//   bench_process_floor [MB] [HOW]
#include <cuda_runtime.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Pageable memory, on huge pages when asked (2 MiB aligned, so that they can be).
void* pageable(std::size_t bytes, bool huge) {
  void* p = std::aligned_alloc(std::size_t{2} << 20, bytes);
  if (p != nullptr && huge) madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t bytes = (argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 0) << 20;
  const std::string how = argc > 2 ? argv[2] : "pinned";
  const auto t0 = Clock::now();
  if (cudaFree(nullptr) != cudaSuccess) {
    std::printf("bench_process_floor: no CUDA device\n");
    return 0;
  }
  const double context = seconds_since(t0);
  if (bytes == 0) {
    std::printf("context %.3f s\n", context);
    return 0;
  }
  const auto t1 = Clock::now();
  void* host = nullptr;
  if (how == "pinned") {
    if (cudaMallocHost(&host, bytes) != cudaSuccess) host = nullptr;
  } else {
    host = pageable(bytes, how == "huge");
    if (host != nullptr && how != "pageable" && cudaHostRegister(host, bytes, cudaHostRegisterPortable) != cudaSuccess)
      host = nullptr;
  }
  if (host != nullptr) std::memset(host, 0, bytes);  // written, as a command's buffers are
  const double made = seconds_since(t1);
  void* device = nullptr;
  if (host == nullptr || cudaMalloc(&device, bytes) != cudaSuccess) {
    std::printf("bench_process_floor: %s memory of %zu MB could not be made\n", how.c_str(), bytes >> 20);
    return 1;
  }
  const auto t2 = Clock::now();
  cudaMemcpy(device, host, bytes, cudaMemcpyHostToDevice);
  const double copied = seconds_since(t2);
  std::printf("context %.3f s, %zu MB %s made and written %.3f s, copied %.3f s (%.1f GB/s)\n", context, bytes >> 20,
              how.c_str(), made, copied, static_cast<double>(bytes) / copied / 1e9);
  return 0;  // the context and the host memory go with the process
}
