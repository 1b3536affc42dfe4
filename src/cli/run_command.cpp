// hyperbatch run JOB.toml / hyperbatch submit JOB.toml: batch jobs over scene
// collections (jobs/runner.hpp) and their Slurm scripts (jobs/submit.hpp).
#include <fmt/core.h>
#include <unistd.h>

#include <filesystem>

#include "jobs/runner.hpp"
#include "jobs/submit.hpp"
#include "mpi/comm.hpp"
#include "io/text_file.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/validators.hpp"

namespace hb::cli {
namespace {

Status parse_shard(const std::string& text, jobs::RunOptions& o) {
  int shard = 0;
  int shards = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%d/%d%c", &shard, &shards, &tail) != 2 || shards < 1 || shard < 0 || shard >= shards)
    return Error{ErrorKind::usage, {}, "--shard", "expected I/N with 0 <= I < N, got '" + text + "'"};
  o.shard = shard;
  o.shards = shards;
  return {};
}

std::string own_binary() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("hyperbatch") : self.string();
}

Status write_script(const jobs::Script& script) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(script.path).parent_path() / "logs", ec);
  HB_TRY(io::write_text_file(script.path, script.text));
  std::filesystem::permissions(script.path, std::filesystem::perms::owner_exec, std::filesystem::perm_options::add, ec);
  return {};
}

Status submit(const jobs::SubmitOptions& o, bool dry_run) {
  auto job = jobs::load_job_file(o.job_file);
  if (!job) return job.error();
  auto script = jobs::render_sbatch(o, *job);
  if (!script) return script.error();
  HB_TRY(write_script(*script));
  if (dry_run) {
    fmt::print("# {}\n{}", script->path, script->text);
    return {};
  }
  auto id = jobs::sbatch({script->path});
  if (!id) return id.error();
  fmt::print("{}\n", *id);
  if (o.shards > 1) {
    // One last task after the array: merges the manifests and writes the report.
    const std::string log = (std::filesystem::path(job->output) / "logs" / "slurm-%j-report.out").string();
    auto report = jobs::sbatch({"--dependency=afterany:" + *id, "--job-name=" + job->name + "-report", "--nodes=1",
                                "--ntasks=1", "--output=" + log,
                                "--wrap=" + o.hyperbatch + " run " + std::filesystem::absolute(o.job_file).string()});
    if (!report) return report.error();
    fmt::print("{}\n", *report);
  }
  return {};
}

}  // namespace

Registered register_run(CLI::App& root) {
  struct Options {
    jobs::RunOptions run;
    std::string shard;
    bool no_progress = false;
  };
  auto o = std::make_shared<Options>();
  auto* app = root.add_subcommand("run", "Run a job file over its scene collection (restartable; MPI ranks share the scenes)");
  app->add_option("job", o->run.job_file, "Job file (TOML)")->required();
  app->add_option("--shard", o->shard, "Run shard I of N of the collection (job arrays: $SLURM_ARRAY_TASK_ID/N)");
  app->add_flag("--no-progress", o->no_progress, "No progress bar or progress lines");
  return {app, [o]() -> Status {
            if (!o->shard.empty()) HB_TRY(parse_shard(o->shard, o->run));
            o->run.show_progress = !o->no_progress;
            const auto world = mpi::Comm::world();
            auto outcome = jobs::run_job(o->run, world);
            if (!outcome) return outcome.error();
            if (world.is_root())
              fmt::print("{} scenes, {} failed; outputs in {} (report.md, manifest.json, metrics.json)\n",
                         outcome->scenes, outcome->failed_scenes, outcome->output_dir);
            if (outcome->failed_scenes > 0)
              return Error{ErrorKind::scenes_failed, outcome->output_dir + "/manifest.json", "scenes",
                           fmt::format("{} of {} scenes failed (see report.md); the others completed",
                                       outcome->failed_scenes, outcome->scenes)};
            return {};
          },
          Ranks::every};
}

Registered register_submit(CLI::App& root) {
  struct Options {
    jobs::SubmitOptions submit;
    bool dry_run = false;
  };
  auto o = std::make_shared<Options>();
  o->submit.hyperbatch = own_binary();
  auto* app = root.add_subcommand("submit", "Write the sbatch script for a job next to its outputs and submit it");
  app->add_option("job", o->submit.job_file, "Job file (TOML)")->required()->check(accepts::existing_file());
  app->add_option("--nodes", o->submit.nodes, "Nodes")->check(accepts::positive_integer(accepts::kIntMax));
  app->add_option("--gpus-per-node", o->submit.gpus_per_node, "GPUs per node, one rank each (0: CPU ranks)")
      ->check(accepts::non_negative_integer(accepts::kIntMax));
  app->add_option("--tasks-per-node", o->submit.tasks_per_node, "Ranks per node (default: one per GPU, 1 without GPUs)")
      ->check(accepts::non_negative_integer(accepts::kIntMax));
  app->add_option("--time", o->submit.time, "Time limit (sbatch --time)");
  app->add_option("--partition", o->submit.partition, "Partition");
  app->add_option("--array", o->submit.shards, "Split the collection over a job array of N allocations")
      ->check(accepts::positive_integer(accepts::kIntMax));
  app->add_option("--hyperbatch", o->submit.hyperbatch, "The binary the script runs (default: this one)");
  app->add_flag("--dry-run", o->dry_run, "Print the script instead of submitting it");
  return {app, [o]() { return submit(o->submit, o->dry_run); }};
}

}  // namespace hb::cli
