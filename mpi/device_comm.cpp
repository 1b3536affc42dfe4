#include "mpi/device_comm.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <string>

#include "mpi/agree.hpp"
#include "src/base/cuda_error.hpp"

namespace hb::mpi {

struct DeviceComm::State {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int device = 0;
};

namespace {

Status nccl_status(ncclResult_t result, const char* what) {
  if (result == ncclSuccess) return {};
  return Error{result == ncclSystemError ? ErrorKind::io : ErrorKind::resource, {}, "nccl",
               std::string(what) + ": " + ncclGetErrorString(result)};
}


}  // namespace

Result<std::unique_ptr<DeviceComm>> DeviceComm::create(const Comm& comm, int device) {
  std::unique_ptr<DeviceComm> out(new DeviceComm());
  out->state_ = std::make_unique<State>();
  out->state_->device = device;
  out->rank_ = comm.rank();
  out->size_ = comm.size();
  Status local = cuda::status(cudaSetDevice(device), "cudaSetDevice");
  // A blocking stream: the collectives wait for the caller's work on the legacy default
  // stream, whose pageable cudaMemcpy can return before its DMA lands (a non-blocking
  // stream read stale inputs at 4 ranks).
  if (local.ok()) local = cuda::status(cudaStreamCreateWithFlags(&out->state_->stream, cudaStreamDefault), "stream");
  ncclUniqueId id{};
  if (comm.is_root() && local.ok()) local = nccl_status(ncclGetUniqueId(&id), "ncclGetUniqueId");
  HB_TRY(agree(local, comm));
  if (comm.is_parallel()) MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, comm.handle());
  local = nccl_status(ncclCommInitRank(&out->state_->comm, out->size_, id, out->rank_), "ncclCommInitRank");
  HB_TRY(agree(local, comm));
  return out;
}

DeviceComm::~DeviceComm() {
  if (!state_) return;
  if (state_->comm != nullptr) ncclCommDestroy(state_->comm);
  if (state_->stream != nullptr) cudaStreamDestroy(state_->stream);
}

Status DeviceComm::allreduce_sum(double* device, std::size_t n) {
  HB_TRY(nccl_status(ncclAllReduce(device, device, n, ncclFloat64, ncclSum, state_->comm, state_->stream),
                     "ncclAllReduce"));
  return cuda::status(cudaStreamSynchronize(state_->stream), "allreduce");
}

Status DeviceComm::broadcast(double* device, std::size_t n, int root) {
  HB_TRY(nccl_status(ncclBroadcast(device, device, n, ncclFloat64, root, state_->comm, state_->stream),
                     "ncclBroadcast"));
  return cuda::status(cudaStreamSynchronize(state_->stream), "broadcast");
}

Status DeviceComm::exchange(const void* send, std::size_t send_bytes, int to, void* recv, std::size_t recv_bytes,
                            int from) {
  HB_TRY(nccl_status(ncclGroupStart(), "ncclGroupStart"));
  const ncclResult_t sent = ncclSend(send, send_bytes, ncclUint8, to, state_->comm, state_->stream);
  const ncclResult_t received = ncclRecv(recv, recv_bytes, ncclUint8, from, state_->comm, state_->stream);
  HB_TRY(nccl_status(ncclGroupEnd(), "ncclGroupEnd"));
  HB_TRY(nccl_status(sent, "ncclSend"));
  HB_TRY(nccl_status(received, "ncclRecv"));
  return cuda::status(cudaStreamSynchronize(state_->stream), "exchange");
}

}  // namespace hb::mpi
