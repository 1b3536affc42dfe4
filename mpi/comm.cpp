#include "mpi/comm.hpp"

#include <unistd.h>

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace hb::mpi {

int Comm::rank() const {
  int rank = 0;
  if (!alone_) MPI_Comm_rank(comm_, &rank);
  return rank;
}

int Comm::size() const {
  int size = 1;
  if (!alone_) MPI_Comm_size(comm_, &size);
  return size;
}

void Comm::barrier() const {
  if (size() > 1) MPI_Barrier(comm_);
}

void Comm::allreduce_sum(std::span<double> values) const {
  if (size() == 1 || values.empty()) return;
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_DOUBLE, MPI_SUM,
                comm_);
}

void Comm::allreduce_sum(std::span<std::int64_t> values) const {
  if (size() == 1 || values.empty()) return;
  MPI_Allreduce(MPI_IN_PLACE, values.data(), static_cast<int>(values.size()), MPI_INT64_T, MPI_SUM,
                comm_);
}

bool Comm::any(bool value) const {
  int local = value ? 1 : 0;
  int global = local;
  if (size() > 1) MPI_Allreduce(&local, &global, 1, MPI_INT, MPI_LOR, comm_);
  return global != 0;
}

namespace {

int count_of(std::size_t n) {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw std::length_error("MPI message of more than 2^31 elements");
  return static_cast<int>(n);
}

// Whether `ranks` (every rank of one host) are 0 .. size - 1, each once.
bool is_permutation_of_ranks(std::vector<std::int64_t> ranks) {
  std::sort(ranks.begin(), ranks.end());
  for (std::size_t i = 0; i < ranks.size(); ++i)
    if (ranks[i] != static_cast<std::int64_t>(i)) return false;
  return true;
}

}  // namespace

int launcher_local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return std::max(0, std::atoi(value));
  }
  return -1;
}

void Comm::broadcast(std::span<double> values, int root) const {
  if (size() == 1 || values.empty()) return;
  MPI_Bcast(values.data(), count_of(values.size()), MPI_DOUBLE, root, comm_);
}

void Comm::broadcast(std::span<std::int64_t> values, int root) const {
  if (size() == 1 || values.empty()) return;
  MPI_Bcast(values.data(), count_of(values.size()), MPI_INT64_T, root, comm_);
}

std::string Comm::broadcast(std::string value, int root) const {
  if (size() == 1) return value;
  std::int64_t length[1] = {static_cast<std::int64_t>(value.size())};
  broadcast(length, root);
  value.resize(static_cast<std::size_t>(length[0]));
  if (length[0] > 0) MPI_Bcast(value.data(), count_of(value.size()), MPI_CHAR, root, comm_);
  return value;
}

std::vector<std::int64_t> Comm::allgather(std::int64_t value) const {
  std::vector<std::int64_t> all(static_cast<std::size_t>(size()), value);
  if (size() > 1) MPI_Allgather(&value, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, comm_);
  return all;
}

std::vector<std::string> Comm::allgather(const std::string& value) const {
  const auto sizes = allgather(static_cast<std::int64_t>(value.size()));
  const auto all = allgather_bytes(std::as_bytes(std::span(value)));
  std::vector<std::string> values;
  std::size_t at = 0;
  for (const auto size : sizes) {
    values.emplace_back(reinterpret_cast<const char*>(all.data()) + at, static_cast<std::size_t>(size));
    at += static_cast<std::size_t>(size);
  }
  return values;
}

std::vector<std::vector<std::string>> Comm::allgather(const std::vector<std::string>& lines) const {
  std::string joined;
  for (const auto& line : lines) joined += line + "\n";
  std::vector<std::vector<std::string>> all;
  for (const auto& theirs : allgather(joined)) {
    auto& split = all.emplace_back();
    for (std::size_t at = 0, end; (end = theirs.find('\n', at)) != std::string::npos; at = end + 1)
      split.push_back(theirs.substr(at, end - at));
  }
  return all;
}

std::vector<std::byte> Comm::allgather_bytes(std::span<const std::byte> mine) const {
  if (size() == 1) return {mine.begin(), mine.end()};
  const auto sizes = allgather(static_cast<std::int64_t>(mine.size()));
  std::vector<int> counts(sizes.size()), offsets(sizes.size());
  std::size_t total = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    counts[r] = count_of(static_cast<std::size_t>(sizes[r]));
    offsets[r] = count_of(total);
    total += static_cast<std::size_t>(sizes[r]);
  }
  std::vector<std::byte> all(total);
  MPI_Allgatherv(mine.data(), count_of(mine.size()), MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE,
                 comm_);
  return all;
}

void Comm::send(std::span<const double> values, int to, int tag) const {
  MPI_Send(values.data(), count_of(values.size()), MPI_DOUBLE, to, tag, comm_);
}

void Comm::recv(std::span<double> values, int from, int tag) const {
  MPI_Recv(values.data(), count_of(values.size()), MPI_DOUBLE, from, tag, comm_, MPI_STATUS_IGNORE);
}

Placement placement(const Comm& comm) {
  Placement p;
  p.host = host_name();
  if (comm.is_parallel()) {
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(comm.handle(), MPI_COMM_TYPE_SHARED, comm.rank(), MPI_INFO_NULL, &node);
    const Comm local(node);
    p.local_rank = local.rank();
    p.local_size = local.size();
    // The launcher's word, where every rank of the host has one of its own: the GPU
    // each rank warmed up before MPI started was picked by it (process_gpu()).
    const int launcher = launcher_local_rank();
    if (is_permutation_of_ranks(local.allgather(launcher))) p.local_rank = launcher;
    MPI_Comm_free(&node);
    return p;
  }
  p.local_rank = std::max(0, launcher_local_rank());
  return p;
}

Exchange::Exchange(const Comm& comm, std::span<const std::byte> out, int to, std::span<std::byte> in, int from,
                   int tag) {
  MPI_Irecv(in.data(), count_of(in.size()), MPI_BYTE, from, tag, comm.handle(), &requests_[0]);
  MPI_Isend(out.data(), count_of(out.size()), MPI_BYTE, to, tag, comm.handle(), &requests_[1]);
}

Exchange::Exchange(Exchange&& other) noexcept {
  for (int i = 0; i < 2; ++i) std::swap(requests_[i], other.requests_[i]);
}

Exchange& Exchange::operator=(Exchange&& other) noexcept {
  wait();
  for (int i = 0; i < 2; ++i) std::swap(requests_[i], other.requests_[i]);
  return *this;
}

void Exchange::wait() {
  if (requests_[0] == MPI_REQUEST_NULL && requests_[1] == MPI_REQUEST_NULL) return;
  MPI_Waitall(2, requests_, MPI_STATUSES_IGNORE);
}

void abort_job(const Comm& comm, const std::string& message, int exit_code) {
  std::fputs(fmt::format("hyperbatch: error on rank {} ({}): {}\n", comm.rank(), host_name(), message).c_str(),
             stderr);
  std::fflush(stderr);
  if (!running()) std::_Exit(exit_code);
  MPI_Abort(comm.handle(), exit_code);
  std::abort();
}

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "unknown-host";
  return name.data();
}

}  // namespace hb::mpi
