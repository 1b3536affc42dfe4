#include "jobs/runner.hpp"

#include <fmt/core.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <map>

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
#include "jobs/rank_run.hpp"
#include "jobs/report.hpp"
#include "jobs/run_lock.hpp"
#include "jobs/scene_queue.hpp"
#include "jobs/schedule.hpp"
#include "jobs/steps.hpp"
#include "mpi/agree.hpp"
#include "src/backend/backend.hpp"
#include "src/base/stopwatch.hpp"

namespace hb::jobs {
namespace fs = std::filesystem;
namespace {

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

struct Assignment {
  std::vector<const SceneSpec*> shard;   // this task's scenes, in collection order
  std::vector<const SceneSpec*> shared;  // above large_scene_mb: every rank takes a block of rows
  std::vector<const SceneSpec*> whole;   // the others, largest first: ranks take them as they are free
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
  for (const std::size_t i : largest_first(in_shard)) a.whole.push_back(whole[i]);
  return a;
}

// This rank's part of one pass over the whole scenes: the next scene no rank has taken,
// until none is left. With `one_ahead` each scene is taken while the one before it runs
// (work(scene, next)), so that its bytes can be loaded meanwhile. An error when this
// rank can no longer take scenes.
template <class Work>
Status take_scenes(SceneQueue queue, bool one_ahead, Work work) {
  auto scene = queue.take();
  while (scene && *scene != nullptr) {
    Result<const SceneSpec*> next = nullptr;
    if (one_ahead) next = queue.take();
    work(**scene, one_ahead && next ? *next : nullptr);
    if (!one_ahead) next = queue.take();
    if (!next) return next.error();
    scene = next;
  }
  return scene ? Status{} : Status{scene.error()};
}

// Where a rank loads its next scene ahead: its GPU's memory on a GPU run; nowhere on the
// CPU, whose passes are bound by their arithmetic rather than their reads.
std::shared_ptr<io::ImageSink> load_ahead(const JobSpec& job) {
  auto backend = make_backend(*backend_kind_from_name(job.backend));
  return backend ? (*backend)->image_sink() : nullptr;
}

// Every rank learns which scenes failed on the others, so that no rank runs their
// later steps.
void share_failures(RankRun& run, const mpi::Comm& comm) {
  for (const auto& theirs : comm.allgather(run.failed_here())) run.failed_elsewhere(theirs);  // names: one line each
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

std::size_t step_index(const std::string& name) {
  const auto& steps = scene_steps();
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].name == name) return i;
  return steps.size();
}

// The campaign basis, unless the manifest already has it for these scenes and parameters.
std::string campaign_phase(const JobSpec& job, std::vector<const SceneSpec*> contributes, RankRun& run,
                           const Manifest& manifest, const RunOptions& o, const mpi::Comm& comm,
                           const std::vector<SceneSpec>& scenes) {
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
  for (const auto* s : contributes) {
    if (run.has_failed(s->name)) continue;  // failed to generate or ingest: no statistics to give
    const auto ingested = fs::path(job.output) / "scenes" / s->name / (s->name + ".h5");
    mine[s->name] = job.ingest.enabled ? ingested.string() : s->path;
  }
  const Stopwatch clock;
  const auto result = build_campaign_basis(job, mine, stats, comm);
  for (const auto& [scene, error] : result.failed) run.mark_failed(scene, "mnf-basis", error);
  run.metrics.add({"campaign", "mnf-basis", result.status.ok() ? "done" : "failed", clock.seconds(),
                   result.bytes_read, 0, result.pixels});
  if (!result.status.ok()) {
    spdlog::error("campaign basis: {}", result.status.error().line());
    if (comm.is_root()) run.record("campaign", "mnf-basis", "failed", {}, {}, result.status.error().line(), nullptr);
    return {};
  }
  if (comm.is_root()) run.record("campaign", "mnf-basis", "done", checksum, {"campaign/mnf_basis.h5"}, {}, nullptr);
  return stats;
}

// Rank 0 makes the output folder and locks it before any rank writes there: the whole
// folder for a run; for a job-array task the folder shared with the array's other tasks
// (no whole run beside them) and its own shard's journals.
Status own_output_folder(const JobSpec& job, const RunOptions& o, std::vector<RunLock>& locks) {
  std::error_code ec;
  fs::create_directories(journal_dir(job.output), ec);
  if (ec) return io_error(job.output, "cannot create the output folder: " + ec.message());
  const bool sharded = o.shards > 1;
  auto folder = RunLock::acquire(folder_lock_path(job.output), job.output,
                                 sharded ? RunLock::Mode::shared : RunLock::Mode::exclusive);
  if (!folder) return folder.error();
  locks.push_back(std::move(*folder));
  if (!sharded) return {};
  auto shard = RunLock::acquire(shard_lock_path(job.output, o.shard, o.shards),
                                fmt::format("{} (shard {}/{})", job.output, o.shard, o.shards));
  if (!shard) return shard.error();
  locks.push_back(std::move(*shard));
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
  const Stopwatch clock;
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
  std::vector<RunLock> locks;  // rank 0's, held until the run has finished
  HB_TRY(mpi::agree(comm.is_root() ? own_output_folder(*job, o, locks) : Status{}, comm));
  remember_hashes_in((fs::path(job->output) / "input-hashes").string());
  const std::string run_id = io::h5::broadcast_from_root(comm.is_root() ? new_run_id() : std::string(), comm);
  log_to_file(job->output, run_id, comm.rank());
  auto manifest = Manifest::load(job->output);
  if (!manifest) return manifest.error();

  const Assignment a = assign(*scenes, o, comm, job->large_scene_bytes);
  HB_TRY(mpi::agree(comm.is_root() ? check_space_for_generated(*job, a.shard, *manifest) : Status{}, comm));
  const std::string claims = claims_folder(job->output, o.shard, o.shards);
  HB_TRY(mpi::agree(comm.is_root() ? claims_ready(claims) : Status{}, comm));
  spdlog::info("job {}: {} scenes in shard {}/{}, {} shared by all {} ranks, the others taken by rank as each is free",
               job->name, a.shard.size(), o.shard, o.shards, a.shared.size(), comm.size());
  Journal journal(job->output, run_id, comm.rank());
  RunProgress progress(journal_dir(job->output), run_id, comm.rank(), static_cast<int>(a.shard.size()), a.shard_bytes,
                       o.show_progress);
  RankRun run(*job, *manifest, journal, progress, load_ahead(*job));

  // Pass 1: make and ingest scenes; pass 2 (after a campaign basis): everything else.
  // Shared (large) scenes first, every rank in step on each; then the whole scenes.
  const bool campaign = job->mnf.campaign;
  const std::size_t split = campaign ? step_index("mnf") : scene_steps().size();
  for (const auto* s : a.shared) run.run_steps(*s, 0, split, {}, &comm);
  std::vector<const SceneSpec*> taken;  // this rank's whole scenes of pass 1
  const bool one_ahead = run.loads_ahead();
  const auto first_pass = [&](const SceneSpec& s, const SceneSpec* next) {
    taken.push_back(&s);
    run.run_steps(s, 0, split, {}, nullptr, next);
    if (!campaign) run.scene_finished(planned_bytes(s));
  };
  Status claimed = take_scenes(SceneQueue(claims, 1, a.whole), one_ahead, first_pass);
  std::string campaign_stats;
  if (campaign) {
    auto contributes = taken;  // shared scenes' statistics are gathered on rank 0
    if (comm.is_root()) contributes.insert(contributes.end(), a.shared.begin(), a.shared.end());
    campaign_stats = campaign_phase(*job, contributes, run, *manifest, o, comm, *scenes);
    share_failures(run, comm);
  }
  for (const auto* s : a.shared) {
    run.run_steps(*s, split, scene_steps().size(), campaign_stats, &comm);
    if (comm.is_root()) run.scene_finished(planned_bytes(*s));
  }
  if (campaign && claimed.ok())
    claimed = take_scenes(SceneQueue(claims, 2, a.whole), one_ahead, [&](const SceneSpec& s, const SceneSpec* next) {
      if (campaign_stats.empty()) {
        if (!run.has_failed(s.name)) run.mark_failed(s.name, "mnf", "no campaign basis (see the campaign entry)");
      } else {
        run.run_steps(s, split, scene_steps().size(), campaign_stats, nullptr, next);
      }
      run.scene_finished(planned_bytes(s));
    });
  if (!claimed) spdlog::error("{}", claimed.error().line());
  wait_for_all(progress, comm);
  progress.finish();
  if (comm.is_root()) remove_claims(claims);

  auto backend = make_backend(*backend_kind_from_name(job->backend));
  const auto per_rank = gather_json(run.metrics.to_json(comm.rank(), backend ? std::string((*backend)->name()) : "none",
                                                         backend ? (*backend)->device_description() : ""),
                                    comm);
  RunOutcome outcome{static_cast<int>(a.shard.size()), 0, job->output};
  Status finished;
  if (comm.is_root()) {
    const FinishOptions finish{run_id, start_ns, o.shards > 1, o.shard};
    auto failed = finish_run(*job, a.shard, finish,
                             run_metrics(per_rank, job->name, run_id, clock.seconds(), o.shard, o.shards, comm.size()));
    if (failed) outcome.failed_scenes = *failed;
    else finished = failed.error();
  }
  if (comm.is_parallel()) MPI_Bcast(&outcome.failed_scenes, 1, MPI_INT, 0, comm.handle());
  // What the ranks logged counts even if the manifest lost it: a failure never exits 0.
  // A rank that could not take scenes may have left some unrun: that too is a failure.
  int logged = static_cast<int>(run.failed_here().size()) + run.unrecorded() + (claimed.ok() ? 0 : 1);
  if (comm.is_parallel()) MPI_Allreduce(MPI_IN_PLACE, &logged, 1, MPI_INT, MPI_SUM, comm.handle());
  outcome.failed_scenes = std::max(outcome.failed_scenes, logged);
  drop_file_log();
  if (comm.any(!finished.ok()))
    return finished.ok() ? io_error(job->output, "rank 0 could not finish the run") : finished.error();
  return outcome;
}

}  // namespace hb::jobs
