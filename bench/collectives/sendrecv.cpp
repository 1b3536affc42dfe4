// The ring step of sharded KNN, time against message size: every rank sends to rank + 1
// while receiving from rank - 1 (NCCL send/recv in one group on device buffers through
// mpi::DeviceComm::exchange; MPI_Isend/Irecv on host buffers through mpi::Exchange).
// busbw = algbw: each byte crosses one link once (nccl-tests' sendrecv convention).
// Usage: mpirun -np N bench_sendrecv [MAX_BYTES]
#include <span>
#include <vector>

#include "bench/collectives/harness.hpp"

namespace {

using namespace hb::bench;

struct Ring {
  int to, from;
};
Ring ring(const Comm& world) {
  return {(world.rank() + 1) % world.size(), (world.rank() + world.size() - 1) % world.size()};
}

// Every rank sends rank + 1 in every slot: what arrives is the left neighbour's.
long count_wrong(const std::vector<double>& v, const Comm& world) {
  const double want = ring(world).from + 1.0;
  return static_cast<long>(std::count_if(v.begin(), v.end(), [&](double x) { return x != want; }));
}

void nccl_table(const Comm& world, hb::mpi::DeviceComm& comm, std::size_t max_bytes) {
  print_header(world, "sendrecv (ring step)", "NCCL");
  const Ring r = ring(world);
  std::vector<double> host(max_bytes / 8, world.rank() + 1.0);
  double *send = nullptr, *recv = nullptr;
  cudaMalloc(&send, max_bytes);
  cudaMalloc(&recv, max_bytes);
  cudaMemcpy(send, host.data(), max_bytes, cudaMemcpyHostToDevice);
  for (std::size_t bytes = 8; bytes <= max_bytes; bytes *= 4) {
    const std::size_t n = bytes / 8;
    cudaMemset(recv, 0, bytes);
    double total = 0;
    const int iters = iterations(bytes);
    for (int i = 0; i <= iters; ++i) {  // iteration 0 warms up
      world.barrier();
      const double t0 = now();
      if (!comm.exchange(send, bytes, r.to, recv, bytes, r.from)) std::exit(1);
      if (i > 0) total += now() - t0;
    }
    host.resize(n);
    cudaMemcpy(host.data(), recv, bytes, cudaMemcpyDeviceToHost);
    print_row(world, n, total / iters, count_wrong(host, world), 1.0);
  }
  cudaFree(send);
  cudaFree(recv);
}

void mpi_table(const Comm& world, std::size_t max_bytes) {
  print_header(world, "sendrecv (ring step)", "MPI (host buffers)");
  const Ring r = ring(world);
  max_bytes = std::min(max_bytes, std::size_t{256} << 20);
  const std::vector<double> out(max_bytes / 8, world.rank() + 1.0);
  std::vector<double> in;
  for (std::size_t bytes = 8; bytes <= max_bytes; bytes *= 4) {
    const std::size_t n = bytes / 8;
    in.assign(n, 0.0);
    double total = 0;
    const int iters = iterations(bytes);
    for (int i = 0; i <= iters; ++i) {
      world.barrier();
      const double t0 = now();
      hb::mpi::Exchange step(world, std::as_bytes(std::span(out.data(), n)), r.to,
                             std::as_writable_bytes(std::span(in)), r.from, /*tag=*/7);
      step.wait();
      if (i > 0) total += now() - t0;
    }
    print_row(world, n, total / iters, count_wrong(in, world), 1.0);
  }
}

}  // namespace

int main(int argc, char** argv) {
  hb::mpi::Runtime runtime(&argc, &argv);
  const Comm world = Comm::world();
  if (world.size() < 2) {
    std::printf("sendrecv needs at least 2 ranks\n");
    return 0;
  }
  const std::size_t max_bytes = max_bytes_arg(argc, argv);
  if (auto comm = device_comm_or_skip(world)) nccl_table(world, *comm, max_bytes);
  mpi_table(world, max_bytes);
  return 0;
}
