// The seam between one rank and many. A Comm wraps an MPI communicator; with one
// rank every collective is a copy or a no-op, so single-process runs take the same path.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <span>
#include <string>

namespace hb::mpi {

// Initialises MPI once per process (singleton init works without mpirun) and
// finalises it on destruction. Create one in main().
class Runtime {
 public:
  Runtime(int* argc, char*** argv);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;
};

class Comm {
 public:
  explicit Comm(MPI_Comm comm) : comm_(comm) {}
  static Comm world() { return Comm(MPI_COMM_WORLD); }
  static Comm self() { return Comm(MPI_COMM_SELF); }

  MPI_Comm handle() const { return comm_; }
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

 private:
  MPI_Comm comm_;
};

// Host name of this process, for logs and error messages.
std::string host_name();

}  // namespace hb::mpi
