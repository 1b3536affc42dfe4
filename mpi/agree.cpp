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

// Broadcasts `values` from rank 0; the other ranks poll with short sleeps: a blocking
// MPI collective spins a core for as long as rank 0 works.
void broadcast_from_root_patiently(std::span<std::int64_t> values, const Comm& comm) {
  MPI_Request request = MPI_REQUEST_NULL;
  MPI_Ibcast(values.data(), static_cast<int>(values.size()), MPI_INT64_T, 0, comm.handle(), &request);
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
  const bool root_ok = !comm.is_root() || root_outcome.ok();
  std::int64_t kind[1] = {root_ok ? -1 : static_cast<std::int64_t>(root_outcome.error().kind)};
  broadcast_from_root_patiently(kind, comm);
  if (kind[0] < 0) return {};
  const std::string line = comm.broadcast(comm.is_root() ? root_outcome.error().line() : std::string());
  if (comm.is_root()) return root_outcome;
  return Error{static_cast<ErrorKind>(kind[0]), {}, {}, line};
}

}  // namespace hb::mpi
