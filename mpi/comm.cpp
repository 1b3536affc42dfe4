#include "mpi/comm.hpp"

#include <unistd.h>

#include <array>

namespace hb::mpi {

Runtime::Runtime(int* argc, char*** argv) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    int provided = 0;
    MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  }
}

Runtime::~Runtime() {
  int finalised = 0;
  MPI_Finalized(&finalised);
  if (!finalised) MPI_Finalize();
}

int Comm::rank() const {
  int rank = 0;
  MPI_Comm_rank(comm_, &rank);
  return rank;
}

int Comm::size() const {
  int size = 1;
  MPI_Comm_size(comm_, &size);
  return size;
}

void Comm::barrier() const { MPI_Barrier(comm_); }

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

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "unknown-host";
  return name.data();
}

}  // namespace hb::mpi
