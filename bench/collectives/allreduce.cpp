// Allreduce (sum, float64) time against message size: NCCL on device buffers through
// mpi::DeviceComm, MPI on host buffers through mpi::Comm. busbw = algbw x 2(n-1)/n, the
// ring's traffic per link, so it compares across rank counts.
// Usage: mpirun -np N bench_allreduce [MAX_BYTES]
#include <vector>

#include "bench/collectives/harness.hpp"

namespace {

using namespace hb::bench;

// Every rank contributes rank + 1 in every slot: the sum is n(n+1)/2 everywhere.
long count_wrong(const std::vector<double>& v, int ranks) {
  const double want = ranks * (ranks + 1) / 2.0;
  return static_cast<long>(std::count_if(v.begin(), v.end(), [&](double x) { return x != want; }));
}

double bus_factor(const Comm& world) { return 2.0 * (world.size() - 1) / world.size(); }

void nccl_table(const Comm& world, hb::mpi::DeviceComm& comm, std::size_t max_bytes) {
  print_header(world, "allreduce", "NCCL");
  std::vector<double> host;
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
      if (!comm.allreduce_sum(device, n)) std::exit(1);
      if (i > 0) total += now() - t0;
    }
    cudaMemcpy(host.data(), device, bytes, cudaMemcpyDeviceToHost);
    print_row(world, n, total / iters, count_wrong(host, world.size()), bus_factor(world));
  }
  cudaFree(device);
}

void mpi_table(const Comm& world, std::size_t max_bytes) {
  print_header(world, "allreduce", "MPI (host buffers)");
  std::vector<double> host;
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
    print_row(world, n, total / iters, count_wrong(host, world.size()), bus_factor(world));
  }
}

}  // namespace

int main(int argc, char** argv) {
  hb::mpi::Runtime runtime(&argc, &argv);
  const Comm world = Comm::world();
  const std::size_t max_bytes = max_bytes_arg(argc, argv);
  if (auto comm = device_comm_or_skip(world)) nccl_table(world, *comm, max_bytes);
  mpi_table(world, max_bytes);
  return 0;
}
