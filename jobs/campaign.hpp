// One MNF basis for a whole campaign: every rank gathers the statistics of its own
// scenes and rank 0 sums them in scene-name order (mnf::sum_in_scene_order: the same
// bits for any rank count and any deal of the scenes), then writes the basis that every
// scene is then projected on.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "jobs/job_file.hpp"
#include "mpi/comm.hpp"

namespace hb::jobs {

struct CampaignResult {
  Status status;                               // the basis itself (all scenes failed, singular...)
  std::map<std::string, std::string> failed;   // scene name -> error line
  std::int64_t pixels = 0;
  std::int64_t bytes_read = 0;
};

// Collective over `comm`. `mine` are this rank's scenes (cube paths by scene name).
// Rank 0 writes `stats_path`.
CampaignResult build_campaign_basis(const JobSpec& job, const std::map<std::string, std::string>& mine,
                                    const std::string& stats_path, const mpi::Comm& comm);

}  // namespace hb::jobs
