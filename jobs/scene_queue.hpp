// Whole scenes handed to a run's ranks as each rank becomes free, in a fixed order
// (largest first): a rank takes a scene by creating its claim file with O_CREAT |
// O_EXCL, which exactly one rank wins on any POSIX file system (local, NFS 3 and later,
// Lustre, GPFS). No message passes between busy ranks, so a rank deep in a step delays
// no one, and a rank whose scenes are done (a resumed run) or cheap takes more of them.
// Which rank runs a scene changes no output: every scene's steps give the same bytes on
// any rank.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "jobs/job_file.hpp"
#include "src/base/error.hpp"

namespace hb::jobs {

class SceneQueue {
 public:
  // `claims`: a folder that every rank of the run shares, made empty by claims_ready;
  // `round`: which pass over the scenes this is (a run with a campaign basis makes two);
  // `scenes`: the same list, in the same order, on every rank.
  SceneQueue(std::string claims, int round, std::vector<const SceneSpec*> scenes)
      : claims_(std::move(claims)), round_(round), scenes_(std::move(scenes)) {}

  // The next scene no rank has taken, or null once none is left; an io error (naming
  // the folder) when a claim can be neither made nor refused.
  Result<const SceneSpec*> take();

 private:
  std::string claims_;
  int round_;
  std::vector<const SceneSpec*> scenes_;
  std::size_t next_ = 0;
};

// OUTPUT/manifest.d/claims (or claims-shard-I-of-N): one run's claim files, guarded by
// the run's lock like the journals beside them.
std::string claims_folder(const std::string& output_dir, int shard, int shards);
// Rank 0, holding the run's lock, before any rank takes a scene: the claims of an
// earlier (killed) run removed.
Status claims_ready(const std::string& folder);
// Rank 0, once every rank has taken its last scene.
void remove_claims(const std::string& folder);

}  // namespace hb::jobs
