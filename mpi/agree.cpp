#include "mpi/agree.hpp"

#include <fmt/core.h>

#include <chrono>
#include <thread>

namespace hb::mpi {

Status agree(Status local, const Comm& comm) {
  if (!comm.is_parallel()) return local;
  const auto failed = comm.allgather(local.ok() ? 0 : 1);
  int first = -1;
  for (std::size_t r = 0; r < failed.size() && first < 0; ++r)
    if (failed[r] != 0) first = static_cast<int>(r);
  if (first < 0) return {};
  // The first failing rank tells the others its cause, its host and the error kind.
  std::string cause = comm.rank() == first ? local.error().line() : std::string();
  std::string host = comm.rank() == first ? host_name() : std::string();
  std::int64_t kind[1] = {comm.rank() == first ? static_cast<std::int64_t>(local.error().kind) : 0};
  cause = comm.broadcast(std::move(cause), first);
  host = comm.broadcast(std::move(host), first);
  comm.broadcast(kind, first);
  if (!local.ok()) return local;
  return Error{static_cast<ErrorKind>(kind[0]), {}, {}, fmt::format("rank {} ({}) failed: {}", first, host, cause)};
}

namespace {

// Returns once rank 0 arrives. The others poll a nonblocking barrier with short sleeps: a
// blocking MPI call spins a core for as long as rank 0 works.
void wait_patiently_for_root(const Comm& comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibarrier(comm.handle(), &request);
  if (comm.is_root()) {
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    return;
  }
  for (int done = 0;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done != 0) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

}  // namespace

Status outcome_of_root(Status root_outcome, const Comm& comm) {
  if (!comm.is_parallel()) return root_outcome;
  wait_patiently_for_root(comm);
  return agree(comm.is_root() ? std::move(root_outcome) : Status{}, comm);
}

}  // namespace hb::mpi
