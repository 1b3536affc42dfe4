// One rank's walk through the scenes it takes (jobs/scene_queue.hpp): each scene's steps
// in order, skipping those the manifest holds done with the same checksum, recording
// each outcome in this rank's journal.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "jobs/job_file.hpp"
#include "jobs/manifest.hpp"
#include "jobs/metrics.hpp"
#include "jobs/progress.hpp"
#include "jobs/steps.hpp"
#include "io/file_image.hpp"
#include "mpi/comm.hpp"

namespace hb::jobs {

// The scene's identity for checksums: its file(s), or how it is generated.
std::string scene_fingerprint(const SceneSpec& s);

class RankRun {
 public:
  using Checksum = std::function<std::string()>;  // a step's checksum, asked once it has run

  RankRun(const JobSpec& job, const Manifest& manifest, Journal& journal, RunProgress& progress,
          std::shared_ptr<io::ImageSink> load_ahead = nullptr)
      : job_(job), manifest_(manifest), journal_(journal), progress_(progress), load_ahead_(std::move(load_ahead)) {}
  ~RankRun() { forget_loaded(); }


  // Runs steps [first, last) of the step table on `scene`; false once the scene failed.
  // `together`: the ranks that share the scene (every rank, in step); null = this rank.
  // Steps before `first` may have run on another rank. `next`: the scene this rank runs
  // next, whose data file is loaded (and hashed) through the rank's sink, into its GPU's
  // memory, once this scene's first step, the one that reads the whole scene, is done
  // (io/file_image.hpp).
  bool run_steps(const SceneSpec& listed, std::size_t first, std::size_t last, const std::string& campaign_stats,
                 const mpi::Comm* together = nullptr, const SceneSpec* next = nullptr);
  bool loads_ahead() const { return load_ahead_ != nullptr; }
  bool has_failed(const std::string& scene) const { return failed_.count(scene) != 0; }
  // Scenes that failed on this rank (recorded here), and those that failed on others.
  std::vector<std::string> failed_here() const { return {failed_here_.begin(), failed_here_.end()}; }
  void failed_elsewhere(const std::vector<std::string>& scenes) { failed_.insert(scenes.begin(), scenes.end()); }
  int unrecorded() const { return unrecorded_; }
  void mark_failed(const std::string& scene, const std::string& step, const std::string& error);
  void scene_finished(std::int64_t bytes);
  void record(const std::string& scene, const std::string& step, const std::string& status, const std::string& checksum,
              std::vector<std::string> outputs, const std::string& error, const nlohmann::json* summary);

  RankMetrics metrics;

 private:
  bool has_record(const std::string& scene) const;
  bool run_scene(const SceneSpec& listed, std::size_t first, std::size_t last, const std::string& campaign_stats,
                 const mpi::Comm* together);
  void load_next();
  void load(const SceneSpec& next);
  void forget_loaded();
  // The chain of checksums starts from the scene's fingerprint, whose content hash runs
  // on a thread while nothing waits for it (see run_steps).
  void start_scene(const SceneSpec& s);
  void catch_up(const SceneContext& c, std::size_t first);
  std::string next_checksum(const SceneContext& c, const Step& step);
  bool run_step(const SceneContext& c, const Step& step, const Checksum& checksum);
  bool run_shared_step(const SceneContext& c, const Step& step, const Checksum& checksum);
  bool fail_step(const SceneContext& c, const Step& step, const std::string& line, double seconds, bool record_it);
  void finish_step(const SceneContext& c, const Step& step, const std::string& checksum, const StepOutcome& outcome,
                   double seconds);

  const JobSpec& job_;
  const Manifest& manifest_;
  Journal& journal_;
  RunProgress& progress_;
  std::map<std::string, std::string> chain_;  // scene -> checksum of its last step
  std::map<std::string, std::size_t> chained_;  // scene -> index of the first step not in its chain
  std::map<std::string, std::future<std::string>> hashing_;  // scene -> its fingerprint, on a thread
  std::set<std::string> failed_;       // not to be run further: failed here or on another rank
  std::set<std::string> failed_here_;  // failures this rank recorded
  int scenes_done_ = 0;
  std::int64_t bytes_done_ = 0;
  int unrecorded_ = 0;  // journal appends that failed
  std::shared_ptr<io::ImageSink> load_ahead_;  // where the next scene is loaded; null: not at all
  const SceneSpec* next_ = nullptr;  // to be loaded once the scene running now allows
  std::string loaded_;               // the data file loaded ahead and not yet forgotten
};

}  // namespace hb::jobs
