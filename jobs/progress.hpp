// Progress of a whole run on rank 0: scenes done of total, the current step,
// throughput and ETA. Each rank rewrites a one-line progress file after every step
// (no messages between busy ranks); rank 0 reads them all when it reports: a bar on
// a terminal, a log line every 10 s otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace hb::jobs {

class RunProgress {
 public:
  RunProgress(std::string dir, std::string run_id, int rank, int total_scenes, std::int64_t total_bytes, bool show);
  // Every rank: what it has finished and what it is doing now.
  void publish(int scenes_done, std::int64_t bytes_done, const std::string& current);
  // Rank 0: report if due (or `force`).
  void tick(bool force = false);
  void finish();

 private:
  std::string dir_;
  std::string run_id_;
  int rank_;
  int total_scenes_;
  std::int64_t total_bytes_;
  bool show_;
  bool terminal_;
  std::string current_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace hb::jobs
