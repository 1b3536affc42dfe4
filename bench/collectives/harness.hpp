// The harness of the collective benchmarks (one file per collective, nccl-tests style):
// an aligned table per transport with size, time, algbw, busbw and #wrong, the slowest
// rank's time standing for the collective's. Run under mpirun; each rank drives the GPU
// of its node-local rank.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "mpi/comm.hpp"
#include "mpi/device_comm.hpp"

namespace hb::bench {

using hb::mpi::Comm;

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline void print_header(const Comm& world, const char* collective, const char* transport) {
  if (!world.is_root()) return;
  std::printf("# %s %s (float64), %d ranks\n", transport, collective, world.size());
  std::printf("%12s %12s %10s %10s %10s %8s\n", "size(B)", "count", "time(us)", "algbw(GB/s)", "busbw(GB/s)",
              "#wrong");
}

// bus_factor turns algbw into busbw: 2(n-1)/n for allreduce, 1 for send/recv.
inline void print_row(const Comm& world, std::size_t n, double seconds, long wrong, double bus_factor) {
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, world.handle());
  MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG, MPI_SUM, world.handle());
  if (!world.is_root()) return;
  const double bytes = static_cast<double>(n) * 8.0;
  const double algbw = bytes / seconds / 1e9;
  std::printf("%12.0f %12zu %10.2f %10.2f %10.2f %8ld\n", bytes, n, seconds * 1e6, algbw, algbw * bus_factor, wrong);
}

inline int iterations(std::size_t bytes) { return bytes < (1u << 20) ? 50 : bytes < (64u << 20) ? 10 : 4; }

inline std::size_t max_bytes_arg(int argc, char** argv) {
  return argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (std::size_t{1} << 30);
}

// The NCCL communicator when every rank has a GPU of its own; null (and a line saying
// the NCCL table is skipped) otherwise.
inline std::unique_ptr<hb::mpi::DeviceComm> device_comm_or_skip(const Comm& world) {
  const auto where = hb::mpi::placement(world);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices <= where.local_rank) {
    if (world.is_root()) std::printf("no GPU for every rank: NCCL table skipped\n");
    return nullptr;
  }
  auto comm = hb::mpi::DeviceComm::create(world, where.local_rank);
  if (!comm) {
    std::fprintf(stderr, "rank %d: %s\n", world.rank(), comm.error().line().c_str());
    std::exit(1);
  }
  return std::move(*comm);
}

}  // namespace hb::bench
