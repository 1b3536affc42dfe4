// One rank, one device: the backend of a rank under mpirun/srun. Each rank takes the GPU
// numbered by its node-local rank (mpi::placement), or, when a launcher showed each rank
// fewer GPUs than its host has ranks, GPU local rank modulo those it sees, if that makes
// every rank's GPU its own (srun --gpus-per-task --gpu-bind). Policy:
//  * cpu: the CPU backend everywhere.
//  * cuda: every rank needs its own GPU; more ranks on a node than GPUs is a usage
//    error naming the host (start at most that many ranks per node).
//  * automatic: GPUs when every node has at least as many GPUs as ranks, else the CPU
//    backend on every rank with a warning. The choice is made for the whole job so that
//    ranks never mix CPU and GPU rounding (results stay the same for any rank count).
// Rank 0 logs one line per rank: host, local rank, device.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "mpi/comm.hpp"
#include "src/backend/backend.hpp"

namespace hb {

Result<std::unique_ptr<Backend>> make_rank_backend(BackendKind kind, const mpi::Comm& comm);

// The device ordinal this rank uses for `kind`, or -1 for the CPU backend (collective).
// A device >= 0 is also made current (cudaSetDevice) and the process's GPU
// (set_process_gpu), so that code creating its own CUDA resources afterwards (the KNN
// search and vote, SAM's scorer) lands on this rank's GPU.
Result<int> rank_device(BackendKind kind, const mpi::Comm& comm);

// Whether the GPUs the ranks of one host picked ("host<TAB>PCI bus id" each, an empty id
// for none) are one per rank: none missing, none taken twice.
bool each_rank_has_its_own_gpu(const std::vector<std::string>& picks);

}  // namespace hb
