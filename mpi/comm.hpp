// The seam between one rank and many. A Comm wraps an MPI communicator; with one
// rank every collective is a copy or a no-op, so single-process runs take the same path.
// MPI runs only in processes a launcher started (mpirun, srun): a process started on
// its own is one rank and never pays MPI's singleton start-up (half a second).
#pragma once

#include <mpi.h>

#include <functional>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace hb::mpi {

// Starts MPI when a launcher started this process (launched_by_launcher()) and
// finalises it, if running, on destruction. Create one in main().
class Runtime {
 public:
  Runtime(int* argc, char*** argv);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
};

// True when mpirun/mpiexec or srun started this process: Open MPI's OMPI_COMM_WORLD_SIZE
// or OMPI_COMM_WORLD_RANK, PMIx's PMIX_RANK, PMI's PMI_RANK or PMI_SIZE, or an srun step
// (SLURM_PROCID with SLURM_STEP_ID; a batch script alone is not a launch).
bool launched_by_launcher();
// True while MPI is initialised and not finalised in this process.
bool running();
// Finalises MPI if it is running (what ~Runtime does, for a process that exits early).
void finish();
// Starts MPI now if it is not running (a singleton without a launcher). Raw MPI calls on
// a one-rank Comm get here through handle(): correct, but slow; guard them with
// is_parallel() instead.
void start_on_demand();
// Runs before a start on demand: main joins the CUDA warm-up there, as MPI_Init sets
// environment variables that cuInit reads.
void before_start_on_demand(std::function<void()> hook);

class Comm {
 public:
  explicit Comm(MPI_Comm comm) : comm_(comm) {}
  // MPI_COMM_WORLD while MPI runs; otherwise a one-rank Comm that calls no MPI.
  static Comm world();
  static Comm self();

  // The MPI communicator, for raw MPI calls (starts MPI on demand for a one-rank Comm).
  MPI_Comm handle() const;
  int rank() const;
  int size() const;
  bool is_parallel() const { return size() > 1; }
  bool is_root() const { return rank() == 0; }

  void barrier() const;
  // In-place element-wise sums across ranks (host buffers).
  void allreduce_sum(std::span<double> values) const;
  void allreduce_sum(std::span<std::int64_t> values) const;
  // True on every rank when `value` is true on any rank: how a local failure becomes everyone's.
  bool any(bool value) const;

  // Root's values on every rank.
  void broadcast(std::span<double> values, int root = 0) const;
  void broadcast(std::span<std::int64_t> values, int root = 0) const;
  std::string broadcast(std::string value, int root = 0) const;
  // One value from each rank, in rank order, on every rank.
  std::vector<std::int64_t> allgather(std::int64_t value) const;
  std::vector<std::string> allgather(const std::string& value) const;
  // Each rank's list of one-line strings (no '\n' in them), in rank order, on every rank.
  std::vector<std::vector<std::string>> allgather(const std::vector<std::string>& lines) const;
  // Every rank's `mine` concatenated in rank order, on every rank (sizes may differ).
  std::vector<std::byte> allgather_bytes(std::span<const std::byte> mine) const;

  // Blocking point-to-point on host buffers (the sizes must match on both sides).
  void send(std::span<const double> values, int to, int tag) const;
  void recv(std::span<double> values, int from, int tag) const;

 private:
  struct Alone {};
  Comm(MPI_Comm comm, Alone) : comm_(comm), alone_(true) {}
  MPI_Comm comm_;
  bool alone_ = false;  // one rank, MPI not running: rank 0 of 1 without asking MPI
};

// The node-local rank the launcher gave this process, -1 where none did; readable before
// MPI starts. Open MPI's mpirun (OMPI_COMM_WORLD_LOCAL_RANK) and MPICH's hydra
// (MPI_LOCALRANKID) are asked before Slurm's srun (SLURM_LOCALID): ranks that mpirun
// starts inside a Slurm batch script all inherit the batch step's SLURM_LOCALID=0.
int launcher_local_rank();

// Where a rank runs: its host, and its rank among the ranks of that host. The launcher's
// word wins where every rank of the host has a different one; otherwise an
// MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) split decides.
struct Placement {
  std::string host;
  int local_rank = 0;
  int local_size = 1;
};
Placement placement(const Comm& comm);

// Nonblocking exchange with two neighbours: send `out` to `to` while receiving `in`
// from `from` (the ring step of the distributed KNN search). wait() completes both.
class Exchange {
 public:
  Exchange() = default;
  Exchange(const Comm& comm, std::span<const std::byte> out, int to, std::span<std::byte> in, int from, int tag);
  ~Exchange() { wait(); }
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;
  Exchange(Exchange&& other) noexcept;
  Exchange& operator=(Exchange&& other) noexcept;
  void wait();

 private:
  MPI_Request requests_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
};

// Prints "hyperbatch: error on rank R (HOST): MESSAGE" and aborts every rank: for
// failures that cannot be turned into an agreed error (a rank stuck elsewhere). Without
// MPI running it exits this process with `exit_code`.
[[noreturn]] void abort_job(const Comm& comm, const std::string& message, int exit_code);

// Host name of this process, for logs and error messages.
std::string host_name();

}  // namespace hb::mpi
