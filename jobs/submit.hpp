// `hyperbatch submit`: an sbatch script from the templates in slurm/templates (built
// into the binary), written next to the job's outputs and optionally submitted.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "src/base/error.hpp"
#include "jobs/job_file.hpp"

namespace hb::jobs {

enum class Template { one_node, multi_node, array };
std::string_view sbatch_template(Template which);

struct SubmitOptions {
  std::string job_file;
  int nodes = 1;
  int gpus_per_node = 0;   // 0: CPU ranks (nodes without GPUs)
  int tasks_per_node = 0;  // 0: one per GPU, or 1 without GPUs
  std::string time;        // sbatch --time; empty = the partition's default
  std::string partition;
  int shards = 1;          // > 1: a job array of this many tasks
  std::string hyperbatch;  // the binary the script runs
  std::string run_args;    // extra `hyperbatch run` arguments
};

struct Script {
  std::string path;  // OUTPUT/hyperbatch.sbatch
  std::string text;
};

Result<Script> render_sbatch(const SubmitOptions& options, const JobSpec& job);

// Runs `sbatch --parsable` on the script; returns the job id.
Result<std::string> sbatch(const std::vector<std::string>& arguments);

}  // namespace hb::jobs
