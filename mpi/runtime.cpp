// When MPI starts: at once under a launcher, on demand otherwise (see comm.hpp).
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <functional>
#include <mutex>
#include <utility>

#include "mpi/comm.hpp"

namespace hb::mpi {
namespace {

bool is_set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0';
}

void start(int* argc, char*** argv) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
}

std::mutex& start_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::function<void()>& start_hook() {
  static std::function<void()> hook;
  return hook;
}

}  // namespace

bool launched_by_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (is_set(name)) return true;
  return is_set("SLURM_PROCID") && is_set("SLURM_STEP_ID");
}

bool running() {
  int initialised = 0;
  int finalised = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalised);
  return initialised != 0 && finalised == 0;
}

Runtime::Runtime(int* argc, char*** argv) {
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised == 0 && launched_by_launcher()) start(argc, argv);
}

void finish() {
  if (running()) MPI_Finalize();
}

Runtime::~Runtime() { finish(); }

void before_start_on_demand(std::function<void()> hook) {
  const std::lock_guard lock(start_mutex());
  start_hook() = std::move(hook);
}

void start_on_demand() {
  const std::lock_guard lock(start_mutex());
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (initialised != 0) return;
  if (start_hook()) std::exchange(start_hook(), {})();
  spdlog::debug("MPI started on demand by a raw MPI call on a one-rank communicator");
  start(nullptr, nullptr);
}

Comm Comm::world() { return running() ? Comm(MPI_COMM_WORLD) : Comm(MPI_COMM_WORLD, Alone{}); }

Comm Comm::self() { return running() ? Comm(MPI_COMM_SELF) : Comm(MPI_COMM_SELF, Alone{}); }

MPI_Comm Comm::handle() const {
  if (alone_) start_on_demand();
  return comm_;
}

}  // namespace hb::mpi
