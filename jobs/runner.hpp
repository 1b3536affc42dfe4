// `hyperbatch run JOB.toml`: every scene of the job through its steps, restartable.
// One process runs everything; under mpirun/srun each rank takes the next scene when it
// is free (jobs/scene_queue.hpp); a job array's task runs its shard of the scenes.
#pragma once

#include <string>

#include "src/base/error.hpp"
#include "mpi/comm.hpp"

namespace hb::jobs {

struct RunOptions {
  std::string job_file;
  int shard = 0;   // this task's shard, [0, shards)
  int shards = 1;  // job array size; 1 = the whole collection
  bool show_progress = true;
};

struct RunOutcome {
  int scenes = 0;
  int failed_scenes = 0;  // reported in the manifest and the report
  std::string output_dir;
};

// Collective over `comm`. Errors are those that stop the whole run (a bad job file,
// an unwritable output folder); a failing scene is counted in RunOutcome instead.
Result<RunOutcome> run_job(const RunOptions& options, const mpi::Comm& comm);

}  // namespace hb::jobs
