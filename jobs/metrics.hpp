// What a run measured, per rank and per stage, gathered on rank 0 into metrics.json:
// seconds, bytes read and written, pixels, throughput; ranks, hosts, devices, versions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mpi/comm.hpp"

namespace hb::jobs {

struct StageRecord {
  std::string scene;
  std::string step;
  std::string status;  // done, skipped, failed
  double seconds = 0;
  std::int64_t bytes_read = 0;
  std::int64_t bytes_written = 0;
  std::int64_t pixels = 0;
};

class RankMetrics {
 public:
  void add(StageRecord r) { records_.push_back(std::move(r)); }
  // This rank's stages summed, its device and host.
  nlohmann::json to_json(int rank, const std::string& backend, const std::string& device) const;

 private:
  std::vector<StageRecord> records_;
};

// Gathers every rank's JSON on rank 0 (empty array elsewhere).
nlohmann::json gather_json(const nlohmann::json& mine, const mpi::Comm& comm);

// Totals over ranks plus the run facts; written by rank 0.
nlohmann::json run_metrics(const nlohmann::json& per_rank, const std::string& job, const std::string& run_id,
                           double wall_seconds, int shard, int shards, int ranks);

}  // namespace hb::jobs
