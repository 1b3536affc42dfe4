#include "jobs/submit.hpp"

#include <fmt/core.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <map>

namespace hb::jobs {
namespace fs = std::filesystem;
namespace {

std::string replace_all(std::string text, const std::map<std::string, std::string>& words) {
  for (const auto& [word, value] : words)
    for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + value.size()))
      text.replace(at, word.size(), value);
  return text;
}

std::string shell_quote(const std::string& s) {
  if (s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+") == std::string::npos)
    return s;
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

Result<Script> render_sbatch(const SubmitOptions& o, const JobSpec& job) {
  if (o.nodes < 1) return Error{ErrorKind::usage, {}, "--nodes", "at least one node"};
  const int tasks = o.tasks_per_node > 0 ? o.tasks_per_node : std::max(o.gpus_per_node, 1);
  if (o.gpus_per_node > 0 && tasks != o.gpus_per_node)
    return Error{ErrorKind::usage, {}, "--tasks-per-node", "with GPUs, one task per GPU: leave it out or equal to --gpus-per-node"};
  const Template which = o.shards > 1 ? Template::array : o.nodes == 1 ? Template::one_node : Template::multi_node;
  const bool gpus = o.gpus_per_node > 0;
  std::string job_name;
  for (const char c : job.name) job_name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  const std::string text = replace_all(
      std::string(sbatch_template(which)),
      {{"@JOB_NAME@", job_name},
       {"@NODES@", std::to_string(o.nodes)},
       {"@TASKS_PER_NODE@", std::to_string(tasks)},
       {"@GPU_LINES@", gpus ? std::string("#SBATCH --gpus-per-task=1\n") : std::string()},
       {"@SRUN_GPU@", gpus ? "--gpu-bind=single:1 " : ""},
       {"@TIME_LINE@", o.time.empty() ? "" : "#SBATCH --time=" + o.time + "\n"},
       {"@PARTITION_LINE@", o.partition.empty() ? "" : "#SBATCH --partition=" + o.partition + "\n"},
       {"@LOG_DIR@", shell_quote((fs::path(job.output) / "logs").string())},
       {"@HYPERBATCH@", shell_quote(o.hyperbatch)},
       {"@JOB_FILE@", shell_quote(fs::absolute(job.file).lexically_normal().string())},
       {"@RUN_ARGS@", o.run_args},
       {"@SHARDS@", std::to_string(o.shards)},
       {"@LAST_SHARD@", std::to_string(o.shards - 1)}});
  return Script{(fs::path(job.output) / "hyperbatch.sbatch").string(), text};
}

Result<std::string> sbatch(const std::vector<std::string>& arguments) {
  std::string command = "sbatch --parsable";
  for (const auto& a : arguments) command += " " + shell_quote(a);
  command += " 2>&1";
  std::FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return Error{ErrorKind::resource, {}, "sbatch", "cannot start sbatch"};
  std::string output;
  std::array<char, 256> buffer{};
  while (std::fgets(buffer.data(), buffer.size(), pipe) != nullptr) output += buffer.data();
  const int status = ::pclose(pipe);
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
  if (status != 0 || output.empty() || !std::isdigit(static_cast<unsigned char>(output.front())))
    return Error{ErrorKind::io, {}, "sbatch", "sbatch failed: " + output};
  return output.substr(0, output.find(';'));  // "ID" or "ID;cluster"
}

}  // namespace hb::jobs
