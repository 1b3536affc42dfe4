#include "src/backend/rank_backend.hpp"

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <string>

#include "src/base/parallel_for.hpp"
#include "mpi/agree.hpp"

#ifdef HB_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace hb {
namespace {

// Rank 0 logs where every rank runs.
void log_bindings(const mpi::Comm& comm, const mpi::Placement& where, const Backend& backend) {
  const std::string mine = fmt::format("rank {} on {} (local rank {} of {}): {} backend, {}\n", comm.rank(), where.host,
                                       where.local_rank, where.local_size, backend.name(),
                                       backend.device_description());
  const auto all = comm.allgather_bytes(std::as_bytes(std::span(mine)));
  if (!comm.is_root()) return;
  std::string text(reinterpret_cast<const char*>(all.data()), all.size());
  for (std::size_t at = 0; at < text.size();) {
    const auto end = text.find('\n', at);
    spdlog::info("{}", text.substr(at, end - at));
    at = end + 1;
  }
}

Status make_current(int device) {
#ifdef HB_HAVE_CUDA
  if (device >= 0 && cudaSetDevice(device) != cudaSuccess)
    return Error{ErrorKind::resource, {}, "--backend", fmt::format("cannot use GPU {}", device)};
  if (device >= 0) set_process_gpu(device);
#else
  (void)device;
#endif
  return {};
}

}  // namespace

Result<int> rank_device(BackendKind kind, const mpi::Comm& comm) {
  const auto where = mpi::placement(comm);
  share_host_threads(where.local_size);  // the host passes' threads, shared with the other ranks here
  if (kind == BackendKind::cpu) return -1;
  const int gpus = cuda_device_count();
  const bool enough = gpus >= where.local_size && where.local_rank < gpus;
  if (kind == BackendKind::cuda) {
    Status local;
    if (!cuda_compiled_in())
      local = Error{ErrorKind::usage, {}, "--backend", "this build has no CUDA backend (configure with HB_CUDA=ON)"};
    else if (!enough)
      local = Error{ErrorKind::usage, {}, "--backend",
                    fmt::format("{} ranks on host {} but {} GPU(s): --backend cuda needs one GPU per rank "
                                "(start at most {} ranks per node, or use --backend cpu)",
                                where.local_size, where.host, gpus, gpus)};
    if (local.ok()) local = make_current(where.local_rank);
    HB_TRY(mpi::agree(local, comm));
    return where.local_rank;
  }
  // automatic: GPUs only when every rank of every node has one.
  const bool short_somewhere = comm.any(!enough);
  if (gpus > 0 && short_somewhere && comm.is_root())
    spdlog::warn("more ranks than GPUs on some node: every rank uses the CPU backend (use --backend cuda to make "
                 "this an error)");
  const int device = short_somewhere || gpus == 0 ? -1 : where.local_rank;
  HB_TRY(mpi::agree(make_current(device), comm));
  return device;
}

Result<std::unique_ptr<Backend>> make_rank_backend(BackendKind kind, const mpi::Comm& comm) {
  auto device = rank_device(kind, comm);
  if (!device) return device.error();
  auto backend = *device < 0 ? make_backend(BackendKind::cpu) : make_backend(BackendKind::cuda, *device);
  HB_TRY(mpi::agree(backend ? Status{} : Status{backend.error()}, comm));
  log_bindings(comm, mpi::placement(comm), **backend);
  return backend;
}

}  // namespace hb
