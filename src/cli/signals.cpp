#include "src/cli/signals.hpp"

#include <signal.h>
#include <unistd.h>

#include <fmt/core.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "io/atomic_file.hpp"

namespace hb::cli {
namespace {

// The handler only writes the signal's number into a pipe (all a handler may safely
// do); the thread reading it does the rest. A handler rather than a blocked mask and
// sigwait, because threads that MPI and CUDA start may unblock signals for themselves.
int wake_fd = -1;
bool say_so = true;  // under a launcher, only the first rank prints the stop line
std::atomic<int> decided_exit{-1};  // the exit code of a process whose error is printed

// The rank the launcher gave this process (mpirun, srun), 0 without one.
int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* value = std::getenv(name)) return std::atoi(value);
  return 0;
}

void on_signal(int signal) {
  const int saved = errno;
  const auto byte = static_cast<unsigned char>(signal);
  (void)::write(wake_fd, &byte, 1);
  errno = saved;
}

// _exit, not exit: other threads may hold locks or sit in MPI or CUDA calls, and
// destructors run from here could wait on them.
[[noreturn]] void stop(int signal) {
  const int removed = io::remove_live_temporaries();
  // A rank that printed its error and is ending is stopped by a launcher that saw
  // another rank fail first: its line is said, its exit code decided.
  if (const int code = decided_exit.load(); code >= 0) ::_exit(code);
  if (say_so)
    fmt::print(stderr, "hyperbatch: stopped by SIG{} (pid {}); removed {} temporary file{}\n", sigabbrev_np(signal),
             ::getpid(), removed, removed == 1 ? "" : "s");
  std::fflush(stderr);
  ::_exit(128 + signal);
}

}  // namespace

void stop_cleanly_on_signals() {
  int fds[2];
  if (::pipe(fds) != 0) return;  // no pipe, no clean stop: the default action still stops the process
  wake_fd = fds[1];
  say_so = launcher_rank() == 0;
  std::thread([read_fd = fds[0]] {
    unsigned char byte = 0;
    while (::read(read_fd, &byte, 1) != 1) {
    }
    stop(byte);
  }).detach();
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void exiting_with(int exit_code) { decided_exit.store(exit_code); }

}  // namespace hb::cli
