// The collective seam for device buffers: an NCCL communicator over the ranks of an
// mpi::Comm, bootstrapped over MPI (rank 0 makes the ncclUniqueId, MPI_Bcast hands it
// to the others). Host buffers go through mpi::Comm (MPI); device buffers through this.
// Compiled only with HB_CUDA; every call is collective over the communicator's ranks
// (send/recv: over the pair) and synchronous (the stream is drained before returning).
#pragma once

#include <cstddef>
#include <memory>

#include "src/base/error.hpp"
#include "mpi/comm.hpp"

namespace hb::mpi {

class DeviceComm {
 public:
  // Each rank passes the GPU it drives (its node-local rank, see src/backend/rank_backend.hpp).
  static Result<std::unique_ptr<DeviceComm>> create(const Comm& comm, int device);
  ~DeviceComm();
  DeviceComm(const DeviceComm&) = delete;
  DeviceComm& operator=(const DeviceComm&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // In-place sum over ranks of n doubles in device memory (ncclAllReduce).
  Status allreduce_sum(double* device, std::size_t n);
  Status broadcast(double* device, std::size_t n, int root);
  // The ring step: send `send_bytes` to `to` while receiving `recv_bytes` from `from`
  // (ncclSend/ncclRecv in one group, so neither side waits for the other to post).
  Status exchange(const void* send, std::size_t send_bytes, int to, void* recv, std::size_t recv_bytes, int from);

 private:
  DeviceComm() = default;
  struct State;
  std::unique_ptr<State> state_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace hb::mpi
