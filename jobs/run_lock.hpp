// Exclusive ownership of an output folder (or of one array shard's journals) by one run.
// The lock is flock(2) on a lock file: the kernel drops it when the process exits or is
// killed, so a dead run never leaves a folder locked, and no stale-lock cleanup exists.
// The file records the holder's host and pid for the message a second run prints.
#pragma once

#include <string>

#include "src/base/error.hpp"

namespace hb::jobs {

class RunLock {
 public:
  // An exclusive lock has the file to itself; shared locks (the tasks of one job array
  // on the folder lock) have it together, but never beside an exclusive one.
  enum class Mode { exclusive, shared };

  // Takes the lock on `lock_file` without waiting. Held by another process (in a mode
  // that excludes this one): an io error naming `what` (the folder) and the host and pid
  // of the last holder to record itself.
  static Result<RunLock> acquire(const std::string& lock_file, const std::string& what, Mode mode = Mode::exclusive);

  RunLock(RunLock&& other) noexcept;
  RunLock& operator=(RunLock&& other) noexcept;
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;
  ~RunLock();

 private:
  explicit RunLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// OUTPUT/hyperbatch.lock: a whole run's (one process or every MPI rank, taken by rank 0),
// exclusive; a job-array task holds it shared, so that no whole run (the array's merge
// started by hand, say) runs beside the array's tasks, which run beside each other.
std::string folder_lock_path(const std::string& output_dir);
// OUTPUT/manifest.d/shard-I-of-N.lock: one job-array task's, guarding its journals while
// the other shards write theirs into the same folder.
std::string shard_lock_path(const std::string& output_dir, int shard, int shards);

}  // namespace hb::jobs
