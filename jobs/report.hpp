// The end of a run, on rank 0: metrics.json, the merged manifest.json and the
// Markdown run report (scenes, failures, accuracy tables, quicklook links). The report
// holds no timings, so the same outputs give the same report; timings are in metrics.json.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/error.hpp"
#include "jobs/job_file.hpp"
#include "jobs/manifest.hpp"

namespace hb::jobs {

struct FinishOptions {
  std::string run_id;
  std::int64_t run_start_ns = 0;  // failures recorded before this are stale
  bool sharded = false;           // keep the journals: other array tasks may still write
  int shard = 0;
};

// Returns the number of scenes that failed in this run.
Result<int> finish_run(const JobSpec& job, const std::vector<const SceneSpec*>& scenes, const FinishOptions& options,
                       const nlohmann::json& metrics);

std::string report_markdown(const JobSpec& job, const std::vector<const SceneSpec*>& scenes, const Manifest& manifest);

}  // namespace hb::jobs
