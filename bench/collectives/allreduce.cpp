// Allreduce time against message size across the ranks of mpirun, nccl-tests style:
// one aligned table per transport (NCCL on device buffers through mpi::DeviceComm, MPI
// on host buffers through mpi::Comm) with size, time, algbw, busbw and #wrong. busbw =
// algbw x 2(n-1)/n, the ring's traffic per link, so it compares across rank counts.
// Each rank drives the GPU of its node-local rank. Usage: mpirun -np N bench_allreduce [MAX_BYTES]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "mpi/comm.hpp"
#include "mpi/device_comm.hpp"

namespace {

using hb::mpi::Comm;

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void header(const Comm& world, const char* transport) {
  if (!world.is_root()) return;
  std::printf("# %s allreduce (sum, float64), %d ranks\n", transport, world.size());
  std::printf("%12s %12s %10s %10s %10s %8s\n", "size(B)", "count", "time(us)", "algbw(GB/s)", "busbw(GB/s)",
              "#wrong");
}

void row(const Comm& world, std::size_t n, double seconds, long wrong) {
  // The slowest rank's time is the collective's.
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, world.handle());
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, world.handle());
  if (!world.is_root()) return;
  const double bytes = static_cast<double>(n) * 8.0;
  const double algbw = bytes / seconds / 1e9;
  const double busbw = algbw * 2.0 * (world.size() - 1) / world.size();
  std::printf("%12.0f %12zu %10.2f %10.2f %10.2f %8ld\n", bytes, n, seconds * 1e6, algbw, busbw, wrong);
}

int iterations(std::size_t bytes) { return bytes < (1u << 20) ? 50 : bytes < (64u << 20) ? 10 : 4; }

// Every rank contributes rank + 1 in every slot: the sum is n(n+1)/2 everywhere.
long count_wrong(const std::vector<double>& v, int ranks) {
  const double want = ranks * (ranks + 1) / 2.0;
  return static_cast<long>(std::count_if(v.begin(), v.end(), [&](double x) { return x != want; }));
}

}  // namespace

int main(int argc, char** argv) {
  hb::mpi::Runtime runtime(&argc, &argv);
  const Comm world = Comm::world();
  const std::size_t max_bytes = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (std::size_t{1} << 30);
  const auto where = hb::mpi::placement(world);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices <= where.local_rank) {
    if (world.is_root()) std::printf("no GPU for every rank: NCCL table skipped\n");
    devices = 0;
  }
  std::vector<double> host;
  if (devices > 0) {
    auto comm = hb::mpi::DeviceComm::create(world, where.local_rank);
    if (!comm) {
      std::fprintf(stderr, "rank %d: %s\n", world.rank(), comm.error().line().c_str());
      return 1;
    }
    header(world, "NCCL");
    double* device = nullptr;
    cudaMalloc(&device, max_bytes);
    for (std::size_t bytes = 8; bytes <= max_bytes; bytes *= 4) {
      const std::size_t n = bytes / 8;
      host.assign(n, world.rank() + 1.0);
      double total = 0;
      const int iters = iterations(bytes);
      for (int i = 0; i <= iters; ++i) {  // iteration 0 warms up
        cudaMemcpy(device, host.data(), bytes, cudaMemcpyHostToDevice);
        world.barrier();
        const double t0 = now();
        if (!(*comm)->allreduce_sum(device, n)) return 1;
        if (i > 0) total += now() - t0;
      }
      cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost);
      row(world, n, total / iters, count_wrong(host, world.size()));
    }
    cudaFree(device);
  }
  header(world, "MPI (host buffers)");
  for (std::size_t bytes = 8; bytes <= std::min(max_bytes, std::size_t{256} << 20); bytes *= 4) {
    const std::size_t n = bytes / 8;
    double total = 0;
    const int iters = iterations(bytes);
    for (int i = 0; i <= iters; ++i) {
      host.assign(n, world.rank() + 1.0);
      world.barrier();
      const double t0 = now();
      world.allreduce_sum(host);
      if (i > 0) total += now() - t0;
    }
    row(world, n, total / iters, count_wrong(host, world.size()));
  }
  return 0;
}
