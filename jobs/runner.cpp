#include "jobs/runner.hpp"

#include <fmt/core.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <optional>
#include <set>

#include "io/band_match.hpp"
#include "io/delivery_archive.hpp"
#include "io/hdf5_access.hpp"  // broadcast_from_root
#include "io/resample_view.hpp"
#include "io/units.hpp"
#include "jobs/campaign.hpp"
#include "jobs/deliveries.hpp"
#include "jobs/input_hashes.hpp"
#include "jobs/manifest.hpp"
#include "jobs/metrics.hpp"
#include "jobs/progress.hpp"
#include "jobs/report.hpp"
#include "jobs/run_lock.hpp"
#include "jobs/schedule.hpp"
#include "jobs/steps.hpp"
#include "mpi/agree.hpp"
#include "src/backend/backend.hpp"

namespace hb::jobs {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string new_run_id() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&t, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  return std::string(stamp) + "-" + std::to_string(::getpid());
}

std::int64_t planned_bytes(const SceneSpec& s) {
  return s.generate ? generated_scene_bytes(*s.generate) : scene_bytes(s.path);
}

// The scene's identity for checksums: its file(s), or how it is generated.
std::string scene_fingerprint(const SceneSpec& s) {
  Fingerprint f;
  if (s.generate) {
    const auto& o = s.generate->options;
    f.add("generate").add(o.lines).add(o.samples).add(o.bands).add(o.classes)
        .add(static_cast<std::int64_t>(o.seed)).add(std::to_string(o.fill_border));
  } else {
    f.add_file(s.path);
    if (fs::path(s.path).extension() == ".hdr") f.add_file(fs::path(s.path).replace_extension(".img").string());
  }
  return f.hex();
}

struct Assignment {
  std::vector<const SceneSpec*> shard;   // this task's scenes, in collection order
  std::vector<const SceneSpec*> shared;  // above large_scene_mb: every rank takes a block of rows
  std::vector<const SceneSpec*> mine;    // this rank's whole scenes
  std::int64_t shard_bytes = 0;
};

Assignment assign(const std::vector<SceneSpec>& scenes, const RunOptions& o, const mpi::Comm& comm,
                  std::int64_t large_scene_bytes) {
  std::vector<Sized> all;
  for (const auto& s : scenes) all.push_back({s.name, planned_bytes(s)});
  const auto shard_of = deal_by_size(all, o.shards);
  Assignment a;
  std::vector<Sized> in_shard;
  std::vector<const SceneSpec*> whole;
  for (std::size_t i = 0; i < scenes.size(); ++i) {
    if (shard_of[i] != o.shard) continue;
    a.shard.push_back(&scenes[i]);
    a.shard_bytes += all[i].bytes;
    const bool large = large_scene_bytes > 0 && comm.is_parallel() && all[i].bytes >= large_scene_bytes;
    if (large) a.shared.push_back(&scenes[i]);
    else whole.push_back(&scenes[i]), in_shard.push_back(all[i]);
  }
  const auto rank_of = deal_by_size(in_shard, comm.size());
  for (std::size_t i = 0; i < whole.size(); ++i)
    if (rank_of[i] == comm.rank()) a.mine.push_back(whole[i]);
  return a;
}

void log_to_file(const std::string& dir, const std::string& run_id, int rank) {
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "logs", ec);
  const auto path = (fs::path(dir) / "logs" / (run_id + "-rank" + std::to_string(rank) + ".log")).string();
  auto sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path);
  sink->set_pattern("%Y-%m-%dT%H:%M:%S.%e %l %v");
  spdlog::default_logger()->sinks().push_back(sink);
}

void drop_file_log() {
  auto& sinks = spdlog::default_logger()->sinks();
  if (sinks.size() > 1) sinks.pop_back();
}

// Temporaries (.NAME.tmp.PID, io/atomic_file) left by a killed run: the step that
// made them is redone, so they are only clutter. `scene` limits the clean-up to one
// scene's files in a folder that several ranks share.
void remove_temporaries(const fs::path& dir, const std::string& scene = {}) {
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(dir, ec)) {
    const std::string name = f.path().filename().string();
    // In a scene's own folder every hidden file is a step's scratch (.knn-report too).
    const bool temporary = name.size() > 1 && name[0] == '.' && (scene.empty() || name.find(".tmp.") != std::string::npos);
    const bool ours = scene.empty() || name.rfind("." + scene + ".", 0) == 0 || name.rfind("." + scene + "_", 0) == 0;
    if (temporary && ours) fs::remove(f.path(), ec);
  }
}

// One rank's walk through its scenes.
class RankRun {
 public:
  using Checksum = std::function<std::string()>;  // a step's checksum, asked once it has run

  RankRun(const JobSpec& job, const Manifest& manifest, Journal& journal, RunProgress& progress)
      : job_(job), manifest_(manifest), journal_(journal), progress_(progress) {}

  // Runs steps [first, last) of the step table on `scene`; false once the scene failed.
  // `together`: the ranks that share the scene (every rank, in step); null = this rank.
  bool run_steps(const SceneSpec& listed, std::size_t first, std::size_t last, const std::string& campaign_stats,
                 const mpi::Comm* together = nullptr) {
    if (failed_.count(listed.name) != 0) return false;
    // A delivery archive is unpacked into scratch for these steps and removed after them.
    auto unpacked = unpack_scene(listed, job_.output, mpi::Comm::world().rank());
    Status unpacking = unpacked ? Status{} : Status{unpacked.error()};
    if (together != nullptr) unpacking = mpi::agree(unpacking, *together);
    if (!unpacking) {
      if (together == nullptr || together->is_root()) mark_failed(listed.name, "unpack", unpacking.error().line());
      failed_.insert(listed.name);
      return false;
    }
    const SceneSpec& scene = *unpacked ? (*unpacked)->scene() : listed;
    SceneContext c{job_, scene, job_.output, (fs::path(job_.output) / "scenes" / scene.name).string(), campaign_stats, {}};
    c.progress = [&](double) { progress_.tick(); };
    c.ranks = together;
    if (together == nullptr || together->is_root()) {
      std::error_code ec;
      fs::create_directories(c.scene_dir, ec);
      remove_temporaries(c.scene_dir);
      if (scene.generate) remove_temporaries(fs::path(scene.path).parent_path(), scene.name);
    }
    if (together != nullptr) together->barrier();  // the folder is ready before any rank writes
    const auto& steps = scene_steps();
    // With no step of the scene on record, no skip depends on its checksums: they are
    // made after each step, when recorded, and the input's hash runs beside the steps.
    const bool on_record = has_record(scene.name);
    for (std::size_t i = first; i < last; ++i) {
      const Step& step = steps[i];
      if (!step.wanted(job_, scene)) continue;
      progress_.publish(scenes_done_, bytes_done_, scene.name + ": " + step.name);
      std::optional<std::string> checksum;
      if (on_record) {
        checksum = next_checksum(c, step);
        if (manifest_.is_done(scene.name, step.name, *checksum)) {
          metrics.add({scene.name, step.name, "skipped", 0, 0, 0, 0});
          continue;
        }
      }
      if (!run_step(c, step, [&] { return checksum ? *checksum : next_checksum(c, step); })) return false;
    }
    return true;
  }

  // A step of a shared scene: distributed steps run on every rank, the others on rank 0
  // while the rest wait; all ranks agree on the outcome, rank 0 records it.
  bool run_shared_step(const SceneContext& c, const Step& step, const Checksum& checksum) {
    const mpi::Comm& ranks = *c.ranks;
    const bool here = step.distributed || ranks.is_root();
    const auto start = Clock::now();
    Result<StepOutcome> outcome = here ? step.run(c) : Result<StepOutcome>(StepOutcome{});
    const Status agreed = mpi::agree(outcome ? Status{} : Status{outcome.error()}, ranks);
    if (!agreed) return fail_step(c, step, agreed.error().line(), since(start), ranks.is_root());
    if (ranks.is_root()) finish_step(c, step, checksum(), *outcome, since(start));
    return true;
  }

  // The chain of checksums starts from the scene's fingerprint, whose content hash runs
  // on a thread while nothing waits for it (see run_steps).
  void start_scene(const SceneSpec& s) {
    if (has_record(s.name)) {
      chain_[s.name] = scene_fingerprint(s);
      return;
    }
    hashing_[s.name] = std::async(std::launch::async, [&s] { return scene_fingerprint(s); });
  }
  bool has_failed(const std::string& scene) const { return failed_.count(scene) != 0; }
  int failed_among(const std::vector<const SceneSpec*>& scenes) const {
    int n = 0;
    for (const auto* s : scenes) n += has_failed(s->name) ? 1 : 0;
    return n;
  }
  int unrecorded() const { return unrecorded_; }
  void mark_failed(const std::string& scene, const std::string& step, const std::string& error) {
    failed_.insert(scene);
    record(scene, step, "failed", {}, {}, error, nullptr);
  }
  void scene_finished(std::int64_t bytes) {
    ++scenes_done_;
    bytes_done_ += bytes;
    progress_.publish(scenes_done_, bytes_done_, "idle");
  }
  void record(const std::string& scene, const std::string& step, const std::string& status, const std::string& checksum,
              std::vector<std::string> outputs, const std::string& error, const nlohmann::json* summary) {
    ManifestEntry e{scene, step, status, checksum, std::move(outputs), error, now_ns(), summary ? *summary : nullptr};
    const Status s = journal_.append(e);
    if (s.ok()) return;
    // The next run will not know this step finished: the run must not end as a success.
    spdlog::error("{}", s.error().line());
    ++unrecorded_;
  }

  RankMetrics metrics;

 private:
  bool has_record(const std::string& scene) const {
    const auto& entries = manifest_.entries();
    const auto at = entries.lower_bound(scene + "/");
    return at != entries.end() && at->second.scene == scene;
  }

  // The step's checksum: the chain so far with the step's name, parameters and extra
  // inputs folded in; it becomes the chain. Asked once per step, in step order.
  std::string next_checksum(const SceneContext& c, const Step& step) {
    const std::string& scene = c.scene.name;
    if (auto hashing = hashing_.find(scene); hashing != hashing_.end()) {
      chain_[scene] = hashing->second.get();
      hashing_.erase(hashing);
    }
    Fingerprint f;
    f.add(step.name).add(step.parameters(job_)).add(chain_[scene]);
    // Physical units change what the analysis steps read (raw is what earlier runs read).
    if (job_.units != "raw") f.add("units").add(job_.units);
    for (const auto& input : step.extra_inputs(c)) f.add_file(input);
    return chain_[scene] = f.hex();
  }

  bool run_step(const SceneContext& c, const Step& step, const Checksum& checksum) {
    spdlog::info("{}: {}", c.scene.name, step.name);
    if (c.ranks != nullptr) return run_shared_step(c, step, checksum);
    const auto start = Clock::now();
    auto outcome = step.run(c);
    const double seconds = since(start);
    if (!outcome) return fail_step(c, step, outcome.error().line(), seconds, true);
    finish_step(c, step, checksum(), *outcome, seconds);
    return true;
  }

  bool fail_step(const SceneContext& c, const Step& step, const std::string& line, double seconds, bool record_it) {
    spdlog::error("{}: {} failed: {}", c.scene.name, step.name, line);
    metrics.add({c.scene.name, step.name, "failed", seconds, 0, 0, 0});
    failed_.insert(c.scene.name);
    if (record_it) record(c.scene.name, step.name, "failed", {}, {}, line, nullptr);
    return false;
  }

  void finish_step(const SceneContext& c, const Step& step, const std::string& checksum, const StepOutcome& outcome,
                   double seconds) {
    std::int64_t written = 0;
    std::vector<std::string> relative;
    for (const auto& path : outcome.outputs) {
      written += output_bytes(path);
      relative.push_back(fs::relative(path, job_.output).string());
    }
    metrics.add({c.scene.name, step.name, "done", seconds, outcome.bytes_read, written, outcome.pixels});
    record(c.scene.name, step.name, "done", checksum, relative, {}, &outcome.summary);
  }

  const JobSpec& job_;
  const Manifest& manifest_;
  Journal& journal_;
  RunProgress& progress_;
  std::map<std::string, std::string> chain_;  // scene -> checksum of its last step
  std::map<std::string, std::future<std::string>> hashing_;  // scene -> its fingerprint, on a thread
  std::set<std::string> failed_;
  int scenes_done_ = 0;
  std::int64_t bytes_done_ = 0;
  int unrecorded_ = 0;  // journal appends that failed
};

std::size_t step_index(const std::string& name) {
  const auto& steps = scene_steps();
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].name == name) return i;
  return steps.size();
}

// The campaign basis, unless the manifest already has it for these scenes and parameters.
std::string campaign_phase(const JobSpec& job, const Assignment& a, RankRun& run, const Manifest& manifest,
                           const RunOptions& o, const mpi::Comm& comm, const std::vector<SceneSpec>& scenes) {
  const std::string stats = (fs::path(job.output) / "campaign" / "mnf_basis.h5").string();
  Fingerprint f;
  f.add("campaign-basis").add(job.mnf.components).add(job.mnf.noise).add(job.mnf.resample_to);
  for (const auto& s : scenes) f.add(s.name).add(scene_fingerprint(s));
  const std::string checksum = f.hex();
  if (manifest.is_done("campaign", "mnf-basis", checksum)) return stats;
  if (o.shards > 1) {
    spdlog::error("a campaign basis is built by one allocation: run the job once without --shard first");
    return {};
  }
  std::error_code ec;
  fs::create_directories(fs::path(stats).parent_path(), ec);
  std::map<std::string, std::string> mine;
  auto contributes = a.mine;  // shared scenes' statistics are gathered on rank 0
  if (comm.is_root()) contributes.insert(contributes.end(), a.shared.begin(), a.shared.end());
  for (const auto* s : contributes) {
    if (run.has_failed(s->name)) continue;  // failed to generate or ingest: no statistics to give
    const auto ingested = fs::path(job.output) / "scenes" / s->name / (s->name + ".h5");
    mine[s->name] = job.ingest.enabled ? ingested.string() : s->path;
  }
  const auto start = Clock::now();
  const auto result = build_campaign_basis(job, mine, stats, comm);
  for (const auto& [scene, error] : result.failed) run.mark_failed(scene, "mnf-basis", error);
  run.metrics.add({"campaign", "mnf-basis", result.status.ok() ? "done" : "failed", since(start), result.bytes_read, 0,
                   result.pixels});
  if (!result.status.ok()) {
    spdlog::error("campaign basis: {}", result.status.error().line());
    if (comm.is_root()) run.record("campaign", "mnf-basis", "failed", {}, {}, result.status.error().line(), nullptr);
    return {};
  }
  if (comm.is_root()) run.record("campaign", "mnf-basis", "done", checksum, {"campaign/mnf_basis.h5"}, {}, nullptr);
  return stats;
}

// Rank 0 makes the output folder and locks it before any rank writes there: the whole
// folder for a run; for a job-array task only its shard's journals, as the shards of one
// array write into the same folder at the same time.
Status own_output_folder(const JobSpec& job, const RunOptions& o, std::optional<RunLock>& lock) {
  std::error_code ec;
  fs::create_directories(journal_dir(job.output), ec);
  if (ec) return io_error(job.output, "cannot create the output folder: " + ec.message());
  auto taken = o.shards > 1 ? RunLock::acquire(shard_lock_path(job.output, o.shard, o.shards),
                                               fmt::format("{} (shard {}/{})", job.output, o.shard, o.shards))
                            : RunLock::acquire(folder_lock_path(job.output), job.output);
  if (!taken) return taken.error();
  lock.emplace(std::move(*taken));
  return {};
}

// A generated scene is written in full: one that cannot fit stops the run before anything
// is generated, instead of filling the disk and failing half-written.
Status check_space_for_generated(const JobSpec& job, const std::vector<const SceneSpec*>& scenes,
                                 const Manifest& manifest) {
  struct statvfs disk {};
  if (::statvfs(job.output.c_str(), &disk) != 0) return {};  // cannot tell: writing will say
  const auto free_bytes = static_cast<std::int64_t>(
      std::min<unsigned long long>(static_cast<unsigned long long>(disk.f_bavail) * disk.f_frsize, INT64_MAX));
  std::int64_t needed = 0;
  for (const auto* s : scenes) {
    const ManifestEntry* made = manifest.find(s->name, "generate");
    if (!s->generate || (made != nullptr && made->status == "done")) continue;
    if (__builtin_add_overflow(needed, generated_disk_bytes(*s->generate), &needed)) needed = INT64_MAX;
    if (needed > free_bytes)
      return io_error((fs::path(job.output) / "generated").string(),
                      fmt::format("no space left for [[generate]] '{}': needs {} bytes, {} free", s->name, needed,
                                  free_bytes));
  }
  return {};
}

// Rank 0 keeps the progress display alive while others finish.
void wait_for_all(RunProgress& progress, const mpi::Comm& comm) {
  if (!comm.is_parallel()) return;
  MPI_Request request;
  MPI_Ibarrier(comm.handle(), &request);
  int done = 0;
  while (MPI_Test(&request, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && done == 0) {
    progress.tick();
    ::usleep(100000);
  }
}

// A campaign basis combines every scene's statistics: the listed scenes must share band
// centres and units (generated scenes are alike by construction; delivery archives are
// not checked before they are unpacked).
Status check_campaign_bands(const JobSpec& job, const std::vector<SceneSpec>& scenes) {
  if (!job.mnf.enabled || !job.mnf.campaign) return {};
  std::vector<std::string> paths;
  for (const auto& s : scenes)
    if (!s.generate && !io::is_delivery_archive(s.path)) paths.push_back(s.path);
  if (job.mnf.resample_to.empty()) return io::check_same_bands(paths);
  HB_TRY(io::check_same_units(paths));
  return io::check_resampling(paths, job.mnf.resample_to);
}

}  // namespace

Result<RunOutcome> run_job(const RunOptions& o, const mpi::Comm& comm) {
  const auto start = Clock::now();
  std::int64_t start_ns = now_ns();
  if (comm.is_parallel()) MPI_Bcast(&start_ns, 1, MPI_INT64_T, 0, comm.handle());
  auto job = load_job_file(o.job_file);
  if (!job) return job.error();
  io::set_scene_units(*io::units_from_name(job->units));
  auto scenes = resolve_collection(*job);
  if (!scenes) return scenes.error();
  HB_TRY(check_deliveries(*scenes, comm));
  HB_TRY(check_campaign_bands(*job, *scenes));
  for (const auto& step : scene_steps())
    if (!step.available && step.wanted(*job, scenes->front()))
      return Error{ErrorKind::usage, job->file, step.name,
                   "this build cannot run the " + step.name + " step yet: remove [" + step.name + "] from the job"};
  std::optional<RunLock> lock;  // rank 0's, held until the run has finished
  HB_TRY(mpi::agree(comm.is_root() ? own_output_folder(*job, o, lock) : Status{}, comm));
  remember_hashes_in((fs::path(job->output) / "input-hashes").string());
  const std::string run_id = io::h5::broadcast_from_root(comm.is_root() ? new_run_id() : std::string(), comm);
  log_to_file(job->output, run_id, comm.rank());
  auto manifest = Manifest::load(job->output);
  if (!manifest) return manifest.error();

  const Assignment a = assign(*scenes, o, comm, job->large_scene_bytes);
  HB_TRY(mpi::agree(comm.is_root() ? check_space_for_generated(*job, a.shard, *manifest) : Status{}, comm));
  spdlog::info("job {}: {} scenes in shard {}/{}, {} shared by all {} ranks, {} on rank {}", job->name, a.shard.size(),
               o.shard, o.shards, a.shared.size(), comm.size(), a.mine.size(), comm.rank());
  Journal journal(job->output, run_id, comm.rank());
  RunProgress progress(journal_dir(job->output), run_id, comm.rank(), static_cast<int>(a.shard.size()), a.shard_bytes,
                       o.show_progress);
  RankRun run(*job, *manifest, journal, progress);

  // Phase 1: make and ingest scenes; phase 2 (after a campaign basis): everything else.
  // Shared (large) scenes first, every rank in step on each; then each rank's own.
  const std::size_t split = job->mnf.campaign ? step_index("mnf") : scene_steps().size();
  for (const auto* s : a.shared) {
    run.start_scene(*s);
    run.run_steps(*s, 0, split, {}, &comm);
  }
  for (const auto* s : a.mine) {
    run.start_scene(*s);
    run.run_steps(*s, 0, split, {}, nullptr);
  }
  std::string campaign_stats;
  if (job->mnf.campaign) {
    campaign_stats = campaign_phase(*job, a, run, *manifest, o, comm, *scenes);
    if (campaign_stats.empty())
      for (const auto* s : a.mine) run.mark_failed(s->name, "mnf", "no campaign basis (see the campaign entry)");
  }
  for (const auto* s : a.shared) {
    run.run_steps(*s, split, scene_steps().size(), campaign_stats, &comm);
    if (comm.is_root()) run.scene_finished(planned_bytes(*s));
  }
  for (const auto* s : a.mine) {
    run.run_steps(*s, split, scene_steps().size(), campaign_stats, nullptr);
    run.scene_finished(planned_bytes(*s));
  }
  wait_for_all(progress, comm);
  progress.finish();

  auto backend = make_backend(*backend_kind_from_name(job->backend));
  const auto per_rank = gather_json(run.metrics.to_json(comm.rank(), backend ? std::string((*backend)->name()) : "none",
                                                         backend ? (*backend)->device_description() : ""),
                                    comm);
  RunOutcome outcome{static_cast<int>(a.shard.size()), 0, job->output};
  Status finished;
  if (comm.is_root()) {
    const FinishOptions finish{run_id, start_ns, o.shards > 1, o.shard};
    auto failed = finish_run(*job, a.shard, finish,
                             run_metrics(per_rank, job->name, run_id, since(start), o.shard, o.shards, comm.size()));
    if (failed) outcome.failed_scenes = *failed;
    else finished = failed.error();
  }
  if (comm.is_parallel()) MPI_Bcast(&outcome.failed_scenes, 1, MPI_INT, 0, comm.handle());
  // What the ranks logged counts even if the manifest lost it: a failure never exits 0.
  int logged = run.failed_among(a.mine) + (comm.is_root() ? run.failed_among(a.shared) : 0) + run.unrecorded();
  if (comm.is_parallel()) MPI_Allreduce(MPI_IN_PLACE, &logged, 1, MPI_INT, MPI_SUM, comm.handle());
  outcome.failed_scenes = std::max(outcome.failed_scenes, logged);
  drop_file_log();
  if (comm.any(!finished.ok()))
    return finished.ok() ? io_error(job->output, "rank 0 could not finish the run") : finished.error();
  return outcome;
}

}  // namespace hb::jobs
