#include "jobs/rank_run.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <optional>
#include <utility>

#include "io/cube.hpp"
#include "io/delivery_archive.hpp"
#include "io/envi_header.hpp"
#include "io/file_image.hpp"
#include "jobs/deliveries.hpp"
#include "jobs/input_hashes.hpp"
#include "jobs/schedule.hpp"
#include "mpi/agree.hpp"
#include "src/base/stopwatch.hpp"

namespace hb::jobs {
namespace fs = std::filesystem;
namespace {

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

}  // namespace

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

// The next scene is loaded once this one's first step is done, or as this one ends.
bool RankRun::run_steps(const SceneSpec& listed, std::size_t first, std::size_t last, const std::string& campaign_stats,
                        const mpi::Comm* together, const SceneSpec* next) {
  next_ = next;
  const bool ran = run_scene(listed, first, last, campaign_stats, together);
  load_next();
  return ran;
}

void RankRun::load_next() {
  if (next_ != nullptr) load(*std::exchange(next_, nullptr));
}

bool RankRun::run_scene(const SceneSpec& listed, std::size_t first, std::size_t last, const std::string& campaign_stats,
                        const mpi::Comm* together) {
  if (failed_.count(listed.name) != 0) return false;
  if (chain_.count(listed.name) == 0 && hashing_.count(listed.name) == 0) start_scene(listed);
  // A delivery archive is unpacked into scratch for these steps and removed after them.
  auto unpacked = unpack_scene(listed, job_.output, mpi::Comm::world().rank());
  Status unpacking = unpacked ? Status{} : Status{unpacked.error()};
  if (together != nullptr) unpacking = mpi::agree(unpacking, *together);
  if (!unpacking) {
    if (together == nullptr || together->is_root()) mark_failed(listed.name, "unpack", unpacking.error().line());
    else failed_.insert(listed.name);
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
  if (together == nullptr) catch_up(c, first);
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
    load_next();
  }
  return true;
}

namespace {

// The data file of a scene that may be loaded ahead: an ENVI scene read as listed
// (neither made by the job, nor unpacked from a delivery archive, nor ingested first).
std::optional<std::string> loadable_data_file(const JobSpec& job, const SceneSpec& s) {
  if (s.generate || job.ingest.enabled || io::is_delivery_archive(s.path)) return std::nullopt;
  if (io::format_from_path(s.path) != io::CubeFormat::envi) return std::nullopt;
  auto paths = io::resolve_envi_paths(s.path);
  if (!paths) return std::nullopt;
  return paths->data;
}

}  // namespace

// Forgets the image loaded for this scene (its step that reads the whole scene is done)
// before loading the next: the rank holds one scene ahead, in the memory the last one
// took.
void RankRun::load(const SceneSpec& next) {
  forget_loaded();
  if (!load_ahead_ || failed_.count(next.name) != 0) return;
  const auto data = loadable_data_file(job_, next);
  if (!data) return;
  spdlog::debug("{}: loading {} ahead", next.name, *data);
  (void)load_and_hash(*data, load_ahead_);
  loaded_ = *data;
}

void RankRun::forget_loaded() {
  if (!loaded_.empty()) io::drop_file_image(std::exchange(loaded_, {}));
}

void RankRun::start_scene(const SceneSpec& s) {
  if (has_record(s.name)) {
    chain_[s.name] = scene_fingerprint(s);
    return;
  }
  hashing_[s.name] = std::async(std::launch::async, [&s] { return scene_fingerprint(s); });
}

void RankRun::mark_failed(const std::string& scene, const std::string& step, const std::string& error) {
  failed_.insert(scene);
  failed_here_.insert(scene);
  record(scene, step, "failed", {}, {}, error, nullptr);
}

void RankRun::scene_finished(std::int64_t bytes) {
  ++scenes_done_;
  bytes_done_ += bytes;
  progress_.publish(scenes_done_, bytes_done_, "idle");
}

void RankRun::record(const std::string& scene, const std::string& step, const std::string& status,
                     const std::string& checksum, std::vector<std::string> outputs, const std::string& error,
                     const nlohmann::json* summary) {
  ManifestEntry e{scene, step, status, checksum, std::move(outputs), error, now_ns(), summary ? *summary : nullptr};
  const Status s = journal_.append(e);
  if (s.ok()) return;
  // The next run will not know this step finished: the run must not end as a success.
  spdlog::error("{}", s.error().line());
  ++unrecorded_;
}

bool RankRun::has_record(const std::string& scene) const {
  const auto& entries = manifest_.entries();
  const auto at = entries.lower_bound(scene + "/");
  return at != entries.end() && at->second.scene == scene;
}

// A scene whose earlier steps ran on another rank: the chain is folded through them
// here as that rank folded it (every wanted step in order, its checksum asked once).
void RankRun::catch_up(const SceneContext& c, std::size_t first) {
  const auto& steps = scene_steps();
  for (std::size_t i = chained_[c.scene.name]; i < first; ++i)
    if (steps[i].wanted(job_, c.scene)) next_checksum(c, steps[i]);
}

// The step's checksum: the chain so far with the step's name, parameters and extra
// inputs folded in; it becomes the chain. Asked once per step, in step order.
std::string RankRun::next_checksum(const SceneContext& c, const Step& step) {
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
  chained_[scene] = static_cast<std::size_t>(&step - scene_steps().data()) + 1;
  return chain_[scene] = f.hex();
}

bool RankRun::run_step(const SceneContext& c, const Step& step, const Checksum& checksum) {
  spdlog::info("{}: {}", c.scene.name, step.name);
  if (c.ranks != nullptr) return run_shared_step(c, step, checksum);
  const Stopwatch clock;
  auto outcome = step.run(c);
  const double seconds = clock.seconds();
  if (!outcome) return fail_step(c, step, outcome.error().line(), seconds, true);
  finish_step(c, step, checksum(), *outcome, seconds);
  return true;
}

// A step of a shared scene: distributed steps run on every rank, the others on rank 0
// while the rest wait; all ranks agree on the outcome, rank 0 records it.
bool RankRun::run_shared_step(const SceneContext& c, const Step& step, const Checksum& checksum) {
  const mpi::Comm& ranks = *c.ranks;
  const bool here = step.distributed || ranks.is_root();
  const Stopwatch clock;
  Result<StepOutcome> outcome = here ? step.run(c) : Result<StepOutcome>(StepOutcome{});
  const Status agreed = mpi::agree(outcome ? Status{} : Status{outcome.error()}, ranks);
  if (!agreed) return fail_step(c, step, agreed.error().line(), clock.seconds(), ranks.is_root());
  if (ranks.is_root()) finish_step(c, step, checksum(), *outcome, clock.seconds());
  return true;
}

bool RankRun::fail_step(const SceneContext& c, const Step& step, const std::string& line, double seconds,
                        bool record_it) {
  spdlog::error("{}: {} failed: {}", c.scene.name, step.name, line);
  metrics.add({c.scene.name, step.name, "failed", seconds, 0, 0, 0});
  failed_.insert(c.scene.name);
  if (!record_it) return false;
  failed_here_.insert(c.scene.name);
  record(c.scene.name, step.name, "failed", {}, {}, line, nullptr);
  return false;
}

void RankRun::finish_step(const SceneContext& c, const Step& step, const std::string& checksum,
                          const StepOutcome& outcome, double seconds) {
  std::int64_t written = 0;
  std::vector<std::string> relative;
  for (const auto& path : outcome.outputs) {
    written += output_bytes(path);
    relative.push_back(fs::relative(path, job_.output).string());
  }
  metrics.add({c.scene.name, step.name, "done", seconds, outcome.bytes_read, written, outcome.pixels});
  record(c.scene.name, step.name, "done", checksum, relative, {}, &outcome.summary);
}

}  // namespace hb::jobs
