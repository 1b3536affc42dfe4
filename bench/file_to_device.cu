// The floor of moving a scene file from the page cache to one GPU, by each way a rank
// could: how much of a rank's statistics pass is the host's own copying, and whether a
// path without it scales when every GPU of a host reads at once.
//   bench_file_to_device FILE [--chunk-mb N] [--piece-kb N] [--method NAME] [--threads N]
//                        [--start-at EPOCH_SECONDS]
// Methods (each moves the whole file, in chunks two in flight or in pieces; default all,
// in order):
//   pread      pread into one of two pinned buffers while the other's copy runs: what
//              io::TileReader and the GPU passes do (page cache -> pinned -> DMA);
//              --threads N splits each chunk's read between N threads, as
//              io::PosixFile::read_at does (up to 16, pieces of at least 2 MiB)
//   pread-host the same reads, no copy to the GPU: the host's part alone
//   early      as pread, but each reader copies every piece of --piece-kb KiB to the GPU
//              right after reading it (the large buffer is still written; the DMA reads
//              the piece from cache instead of memory)
//   cached     --threads N threads, each moving its share of the file through four pinned
//              pieces of --piece-kb KiB (default 256) that stay in its core's cache: each
//              piece is read, then copied by DMA into the file's place in one device
//              buffer of the file's size, while the thread reads the next; the page cache
//              is read once and nothing large is written in host memory
//   cached-host the same reads, no copy to the GPU
//   register   the file mapped, each chunk pinned in place (cudaHostRegister, read-only)
//              and copied by DMA straight from the page cache: no host copy, a pinning
//   pageable   cudaMemcpyAsync from the mapping unpinned: the driver stages it
// --start-at: wait (after CUDA's start) until this wall-clock time, so that processes
// started together, one a GPU, move their files at the same moment.
// Prints one line per method: seconds, GB/s, and the seconds spent pinning.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "bench/timing.cuh"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct File {
  int fd = -1;
  std::size_t size = 0;
};

struct Moved {
  double seconds = 0;
  double pinning = 0;
};

// Two chunks in flight: chunk i reuses slot i % 2 once chunk i - 2's copy has finished.
struct Slots {
  cudaStream_t stream{};
  cudaEvent_t done[2]{};
  void* device[2]{};
  explicit Slots(std::size_t chunk) {
    CHECK_CUDA(cudaStreamCreate(&stream));
    for (int s = 0; s < 2; ++s) {
      CHECK_CUDA(cudaEventCreate(&done[s]));
      CHECK_CUDA(cudaMalloc(&device[s], chunk));
    }
  }
  ~Slots() {
    for (int s = 0; s < 2; ++s) {
      cudaEventDestroy(done[s]);
      cudaFree(device[s]);
    }
    cudaStreamDestroy(stream);
  }
};

void read_fully(int fd, char* into, std::size_t bytes, std::size_t at) {
  for (std::size_t got = 0; got < bytes;) {
    const ssize_t n = ::pread(fd, into + got, bytes - got, static_cast<off_t>(at + got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::fprintf(stderr, "bench_file_to_device: read failed at %zu\n", at + got);
      std::exit(1);
    }
    got += static_cast<std::size_t>(n);
  }
}

// One chunk read by `threads` threads, each a contiguous piece.
void read_parallel(int fd, char* into, std::size_t bytes, std::size_t at, unsigned threads) {
  const std::size_t piece = (bytes + threads - 1) / threads;
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < threads && piece * t < bytes; ++t)
    workers.emplace_back([=] { read_fully(fd, into + piece * t, std::min(piece, bytes - piece * t), at + piece * t); });
  read_fully(fd, into, std::min(piece, bytes), at);
  for (auto& w : workers) w.join();
}

Moved by_pread(const File& file, std::size_t chunk, unsigned threads, bool to_device) {
  Slots slots(chunk);
  char* pinned[2];
  for (auto& p : pinned) CHECK_CUDA(cudaMallocHost(reinterpret_cast<void**>(&p), chunk));
  const auto t0 = Clock::now();
  for (std::size_t at = 0, i = 0; at < file.size; at += chunk, ++i) {
    const auto s = i % 2;
    const std::size_t bytes = std::min(chunk, file.size - at);
    if (i >= 2) CHECK_CUDA(cudaEventSynchronize(slots.done[s]));
    read_parallel(file.fd, pinned[s], bytes, at, threads);
    if (to_device) CHECK_CUDA(cudaMemcpyAsync(slots.device[s], pinned[s], bytes, cudaMemcpyHostToDevice, slots.stream));
    CHECK_CUDA(cudaEventRecord(slots.done[s], slots.stream));
  }
  CHECK_CUDA(cudaStreamSynchronize(slots.stream));
  const Moved moved{seconds_since(t0), 0};
  for (auto* p : pinned) CHECK_CUDA(cudaFreeHost(p));
  return moved;
}

// fn(t) for t in [0, n), each on a thread of its own current on `gpu`; returns when all ran.
template <class Fn>
void on_threads(unsigned n, int gpu, const Fn& fn) {
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < n; ++t)
    workers.emplace_back([&fn, gpu, t] {
      CHECK_CUDA(cudaSetDevice(gpu));
      fn(t);
    });
  for (auto& w : workers) w.join();
}

// A chunk's bytes [begin, end) read into `into` in pieces, each copied to the same offset
// of `device` on `stream` right after its read, while it is still in this core's cache.
void read_copying_early(int fd, char* into, char* device, std::size_t begin, std::size_t end, std::size_t at,
                        std::size_t piece, cudaStream_t stream) {
  for (std::size_t from = begin; from < end; from += piece) {
    const std::size_t n = std::min(piece, end - from);
    read_fully(fd, into + from, n, at + from);
    CHECK_CUDA(cudaMemcpyAsync(device + from, into + from, n, cudaMemcpyHostToDevice, stream));
  }
}

// As by_pread, but each reader copies its pieces to the GPU as it reads them, on a
// stream of its own; a slot is free again once every reader's copies into it are done.
Moved by_pread_early(const File& file, std::size_t chunk, unsigned threads, std::size_t piece) {
  Slots slots(chunk);
  char* pinned[2];
  for (auto& p : pinned) CHECK_CUDA(cudaMallocHost(reinterpret_cast<void**>(&p), chunk));
  std::vector<cudaStream_t> streams(threads);
  std::vector<cudaEvent_t> done[2];
  for (auto& stream : streams) CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (auto& events : done) {
    events.resize(threads);
    for (auto& e : events) CHECK_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  int gpu = 0;
  CHECK_CUDA(cudaGetDevice(&gpu));
  const auto t0 = Clock::now();
  for (std::size_t at = 0, i = 0; at < file.size; at += chunk, ++i) {
    const auto s = i % 2;
    const std::size_t bytes = std::min(chunk, file.size - at);
    if (i >= 2)
      for (auto e : done[s]) CHECK_CUDA(cudaEventSynchronize(e));
    const std::size_t share = (bytes + threads - 1) / threads;
    on_threads(static_cast<unsigned>(std::min<std::size_t>(threads, (bytes + share - 1) / share)), gpu, [&](unsigned t) {
      read_copying_early(file.fd, pinned[s], static_cast<char*>(slots.device[s]), share * t,
                         std::min(bytes, share * (t + 1)), at, piece, streams[t]);
      CHECK_CUDA(cudaEventRecord(done[s][t], streams[t]));
    });
  }
  for (auto stream : streams) CHECK_CUDA(cudaStreamSynchronize(stream));
  const Moved moved{seconds_since(t0), 0};
  for (auto& events : done)
    for (auto e : events) CHECK_CUDA(cudaEventDestroy(e));
  for (auto stream : streams) CHECK_CUDA(cudaStreamDestroy(stream));
  for (auto* p : pinned) CHECK_CUDA(cudaFreeHost(p));
  return moved;
}

// One thread's share [begin, end) of the file through `kPieces` small pinned buffers.
constexpr int kPieces = 4;
void move_share_cached(const File& file, std::size_t begin, std::size_t end, std::size_t piece, char* device) {
  cudaStream_t stream{};
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaEvent_t done[kPieces];
  char* pinned[kPieces];
  for (int s = 0; s < kPieces; ++s) {
    CHECK_CUDA(cudaEventCreateWithFlags(&done[s], cudaEventDisableTiming));
    CHECK_CUDA(cudaMallocHost(reinterpret_cast<void**>(&pinned[s]), piece));
  }
  for (std::size_t at = begin, i = 0; at < end; at += piece, ++i) {
    const auto s = i % kPieces;
    const std::size_t bytes = std::min(piece, end - at);
    if (i >= kPieces) CHECK_CUDA(cudaEventSynchronize(done[s]));
    read_fully(file.fd, pinned[s], bytes, at);
    if (device != nullptr)
      CHECK_CUDA(cudaMemcpyAsync(device + at, pinned[s], bytes, cudaMemcpyHostToDevice, stream));
    CHECK_CUDA(cudaEventRecord(done[s], stream));
  }
  CHECK_CUDA(cudaStreamSynchronize(stream));
  for (int s = 0; s < kPieces; ++s) {
    CHECK_CUDA(cudaEventDestroy(done[s]));
    CHECK_CUDA(cudaFreeHost(pinned[s]));
  }
  CHECK_CUDA(cudaStreamDestroy(stream));
}

Moved by_cached_pieces(const File& file, std::size_t piece, unsigned threads, bool to_device) {
  char* device = nullptr;
  if (to_device) CHECK_CUDA(cudaMalloc(reinterpret_cast<void**>(&device), file.size));
  // Shares in whole pieces, so that only the last piece of the file is short.
  const std::size_t pieces = (file.size + piece - 1) / piece;
  const std::size_t each = (pieces + threads - 1) / threads * piece;
  int gpu = 0;
  CHECK_CUDA(cudaGetDevice(&gpu));
  const auto t0 = Clock::now();
  on_threads(static_cast<unsigned>(std::min<std::size_t>(threads, (file.size + each - 1) / each)), gpu, [&](unsigned t) {
    move_share_cached(file, each * t, std::min(file.size, each * (t + 1)), piece, device);
  });
  const Moved moved{seconds_since(t0), 0};
  if (device != nullptr) CHECK_CUDA(cudaFree(device));
  return moved;
}

Moved from_mapping(const File& file, std::size_t chunk, bool pin) {
  auto* base = static_cast<char*>(::mmap(nullptr, file.size, PROT_READ, MAP_SHARED, file.fd, 0));
  if (base == MAP_FAILED) {
    std::fprintf(stderr, "bench_file_to_device: mmap failed\n");
    std::exit(1);
  }
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  Slots slots(chunk);
  char* pinned_at[2] = {nullptr, nullptr};
  Moved moved;
  const auto unpin = [&](std::size_t s) {
    if (pinned_at[s] != nullptr) CHECK_CUDA(cudaHostUnregister(pinned_at[s]));
    pinned_at[s] = nullptr;
  };
  const auto t0 = Clock::now();
  for (std::size_t at = 0, i = 0; at < file.size; at += chunk, ++i) {
    const auto s = i % 2;
    const std::size_t bytes = std::min(chunk, file.size - at);
    if (i >= 2) CHECK_CUDA(cudaEventSynchronize(slots.done[s]));
    if (pin) {
      const auto t1 = Clock::now();
      unpin(s);
      // Whole pages: the mapping of the file's last page reads as zeros past its end.
      CHECK_CUDA(cudaHostRegister(base + at, (bytes + page - 1) / page * page, cudaHostRegisterReadOnly));
      pinned_at[s] = base + at;
      moved.pinning += seconds_since(t1);
    }
    CHECK_CUDA(cudaMemcpyAsync(slots.device[s], base + at, bytes, cudaMemcpyHostToDevice, slots.stream));
    CHECK_CUDA(cudaEventRecord(slots.done[s], slots.stream));
  }
  CHECK_CUDA(cudaStreamSynchronize(slots.stream));
  for (std::size_t s = 0; s < 2; ++s) unpin(s);
  moved.seconds = seconds_since(t0);
  ::munmap(base, file.size);
  return moved;
}

void wait_until(double epoch_seconds) {
  const auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (epoch_seconds > now) std::this_thread::sleep_for(std::chrono::duration<double>(epoch_seconds - now));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_file_to_device FILE [--chunk-mb N] [--piece-kb N] "
                         "[--method pread|pread-host|early|cached|cached-host|register|pageable] [--threads N] "
                         "[--start-at EPOCH_SECONDS]\n");
    return 2;
  }
  std::size_t chunk_mb = 64;
  std::string only;
  double start_at = 0;
  unsigned threads = 1;
  std::size_t piece_kb = 256;
  for (int a = 2; a + 1 < argc; a += 2) {
    const std::string flag = argv[a];
    if (flag == "--chunk-mb") chunk_mb = std::strtoull(argv[a + 1], nullptr, 10);
    else if (flag == "--method") only = argv[a + 1];
    else if (flag == "--start-at") start_at = std::strtod(argv[a + 1], nullptr);
    else if (flag == "--piece-kb") piece_kb = std::max<std::size_t>(4, std::strtoull(argv[a + 1], nullptr, 10));
    else if (flag == "--threads") threads = std::max(1u, static_cast<unsigned>(std::strtoul(argv[a + 1], nullptr, 10)));
  }
  File file;
  file.fd = ::open(argv[1], O_RDONLY | O_CLOEXEC);
  struct stat st {};
  if (file.fd < 0 || ::fstat(file.fd, &st) != 0 || st.st_size == 0) {
    std::fprintf(stderr, "bench_file_to_device: cannot read %s\n", argv[1]);
    return 1;
  }
  file.size = static_cast<std::size_t>(st.st_size);
  CHECK_CUDA(cudaFree(nullptr));  // CUDA's start, before the common start time
  const std::size_t chunk = chunk_mb << 20;
  wait_until(start_at);
  for (const std::string method : {"pread", "pread-host", "early", "cached", "cached-host", "register", "pageable"}) {
    if (!only.empty() && method != only) continue;
    const bool cached = method.starts_with("cached");
    const Moved moved = method == "pread"         ? by_pread(file, chunk, threads, true)
                        : method == "early"       ? by_pread_early(file, chunk, threads, piece_kb << 10)
                        : method == "pread-host"  ? by_pread(file, chunk, threads, false)
                        : method == "cached"      ? by_cached_pieces(file, piece_kb << 10, threads, true)
                        : method == "cached-host" ? by_cached_pieces(file, piece_kb << 10, threads, false)
                        : method == "register"    ? from_mapping(file, chunk, true)
                                                  : from_mapping(file, chunk, false);
    const std::string unit = cached ? std::to_string(piece_kb) + " KB pieces"
                             : method == "early"
                                 ? std::to_string(chunk_mb) + " MB / " + std::to_string(piece_kb) + " KB"
                                 : std::to_string(chunk_mb) + " MB chunks";
    const bool threaded = method.starts_with("pread") || method == "early" || cached;
    std::printf("%-11s %2u threads, %6.2f GB in %14s: %7.3f s %7.2f GB/s, pinning %6.3f s\n", method.c_str(),
                threaded ? threads : 1u, static_cast<double>(file.size) / 1e9,
                unit.c_str(), moved.seconds, static_cast<double>(file.size) / 1e9 / moved.seconds, moved.pinning);
  }
  ::close(file.fd);
  return 0;
}
