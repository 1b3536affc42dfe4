#include "src/backend/rank_backend.hpp"

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <set>
#include <string>
#include <vector>

#include "src/base/parallel_for.hpp"
#include "mpi/agree.hpp"

#ifdef HB_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace hb {
namespace {

// Rank 0 logs where every rank runs.
void log_bindings(const mpi::Comm& comm, const mpi::Placement& where, const Backend& backend) {
  const auto lines = comm.allgather(fmt::format("rank {} on {} (local rank {} of {}): {} backend, {}",
                                                      comm.rank(), where.host, where.local_rank, where.local_size,
                                                      backend.name(), backend.device_description()));
  if (!comm.is_root()) return;
  for (const auto& line : lines) spdlog::info("{}", line);
}

// The PCI bus id of a visible GPU, "" for none.
std::string bus_id(int device) {
#ifdef HB_HAVE_CUDA
  char id[32] = {};
  if (device >= 0 && cudaDeviceGetPCIBusId(id, sizeof(id), device) == cudaSuccess) return id;
#else
  (void)device;
#endif
  return {};
}

// Whether the GPU each rank of this host picked is its own (collective).
bool picks_are_own(const mpi::Comm& comm, const std::string& host, int pick) {
  std::vector<std::string> here;
  for (auto& line : comm.allgather(host + '\t' + bus_id(pick)))
    if (line.starts_with(host + '\t')) here.push_back(std::move(line));
  return each_rank_has_its_own_gpu(here);
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

bool each_rank_has_its_own_gpu(const std::vector<std::string>& picks) {
  std::set<std::string> seen;
  for (const auto& pick : picks)
    if (pick.ends_with('\t') || !seen.insert(pick).second) return false;  // no GPU, or one taken twice
  return true;
}

Result<int> rank_device(BackendKind kind, const mpi::Comm& comm) {
  const auto where = mpi::placement(comm);
  share_host_threads(where.local_size);  // the host passes' threads, shared with the other ranks here
  if (kind == BackendKind::cpu) return -1;
  // Each rank takes the GPU numbered by its node-local rank modulo the GPUs it sees: all
  // of the host's, or only its own (a job of one rank narrowed by warm_up_device(), or
  // srun --gpus-per-task with --gpu-bind, as `hyperbatch submit` asks; number 0). The
  // pick is kept when no two ranks of a host land on the same physical GPU (PCI bus id).
  const int gpus = cuda_device_count();
  const int pick = gpus > 0 ? where.local_rank % gpus : -1;
  const bool own = picks_are_own(comm, where.host, pick);  // every rank takes part
  const bool enough = pick >= 0 && own;
  if (kind == BackendKind::cuda) {
    Status local;
    if (!cuda_compiled_in())
      local = Error{ErrorKind::usage, {}, "--backend", "this build has no CUDA backend (configure with HB_CUDA=ON)"};
    else if (!enough)
      local = Error{ErrorKind::usage, {}, "--backend",
                    fmt::format("{} ranks on host {} but {} GPU(s): --backend cuda needs one GPU per rank "
                                "(start at most {} ranks per node, or use --backend cpu)",
                                where.local_size, where.host, gpus, gpus)};
    if (local.ok()) local = make_current(pick);
    HB_TRY(mpi::agree(local, comm));
    return pick;
  }
  // automatic: GPUs only when every rank of every node has one.
  const bool short_somewhere = comm.any(!enough);
  if (gpus > 0 && short_somewhere && comm.is_root())
    spdlog::warn("more ranks than GPUs on some node: every rank uses the CPU backend (use --backend cuda to make "
                 "this an error)");
  const int device = short_somewhere || gpus == 0 ? -1 : pick;
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
