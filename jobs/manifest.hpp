// The restart record of a job's output folder. manifest.json is the merged state;
// while a run goes on every rank appends each finished scene+step as one JSON line to
// its own journal (manifest.d/RUN-rankR.jsonl, flushed line by line), so a run killed
// at any instant loses at most the step in flight. Loading merges manifest.json and
// every journal; for one scene+step the latest entry wins.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/error.hpp"

namespace hb::jobs {

struct ManifestEntry {
  std::string scene;
  std::string step;
  std::string status;    // "done" or "failed"
  std::string checksum;  // of the step's inputs and parameters
  std::vector<std::string> outputs;  // relative to the output folder
  std::string error;     // one line, when failed
  // Wall clock, kept in the journals only: orders entries of different runs there.
  // manifest.json has no times (the same job gives the same bytes); loaded, its entries
  // count as older than any journal's.
  std::int64_t finished_ns = 0;
  nlohmann::json summary;        // step-specific facts (accuracy, components...)
};

nlohmann::json to_json(const ManifestEntry& e);
ManifestEntry entry_from_json(const nlohmann::json& j);

class Manifest {
 public:
  // Reads manifest.json and the journals under `output_dir` (both may be absent).
  static Result<Manifest> load(const std::string& output_dir);

  const ManifestEntry* find(const std::string& scene, const std::string& step) const;
  // True when the step finished with this checksum and its outputs are all still there.
  bool is_done(const std::string& scene, const std::string& step, const std::string& checksum) const;
  void record(ManifestEntry entry);
  void remove(const std::string& scene, const std::string& step);
  const std::map<std::string, ManifestEntry>& entries() const { return entries_; }

  // manifest.json, written atomically: entries in key order, without times.
  Status save(const std::string& job_name) const;

 private:
  std::string dir_;
  std::map<std::string, ManifestEntry> entries_;  // key: scene/step
};

// One rank's append-only journal for one run.
class Journal {
 public:
  Journal(const std::string& output_dir, const std::string& run_id, int rank);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  Status append(const ManifestEntry& entry);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

std::string journal_dir(const std::string& output_dir);
std::int64_t now_ns();

}  // namespace hb::jobs
