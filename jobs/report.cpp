#include "jobs/report.hpp"

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "jobs/steps.hpp"
#include "io/text_file.hpp"

namespace hb::jobs {
namespace fs = std::filesystem;
namespace {

std::string percent(const nlohmann::json& x) {
  return x.is_number() ? fmt::format("{:.2f}", 100.0 * x.get<double>()) : "n/a";
}

// The failure of a scene in this run, if any (older failures were retried).
const ManifestEntry* failure_of(const Manifest& m, const std::string& scene) {
  const ManifestEntry* latest = nullptr;
  for (const auto& [key, e] : m.entries())
    if (e.scene == scene && e.status == "failed" && (latest == nullptr || e.finished_ns > latest->finished_ns)) latest = &e;
  return latest;
}

// A failure older than this run was retried in it: it no longer describes the scene.
void drop_stale_failures(Manifest& m, const std::vector<const SceneSpec*>& scenes, std::int64_t since_ns) {
  std::vector<std::pair<std::string, std::string>> stale;
  for (const auto* s : scenes)
    for (const auto& [key, e] : m.entries())
      if (e.scene == s->name && e.status == "failed" && e.finished_ns < since_ns) stale.emplace_back(e.scene, e.step);
  for (const auto& [scene, step] : stale) m.remove(scene, step);
}

std::string accuracy_section(const nlohmann::json& knn) {
  const auto& a = knn["accuracy"];
  if (!a.is_object()) return "No evaluation pixels: accuracy not assessed.\n\n";
  std::string md = fmt::format("KNN (k = {}, features {}): overall accuracy {} %, kappa {:.4f} on {} evaluation pixels.\n\n",
                               knn.value("k", 0), knn.value("features", ""), percent(a["overall_accuracy"]),
                               a["kappa"].is_number() ? a["kappa"].get<double>() : NAN, a.value("evaluation_pixels", 0));
  md += "| id | class | truth pixels | predicted | producer's % | user's % |\n|---|---|---|---|---|---|\n";
  for (const auto& c : a["per_class"])
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", c.value("id", 0), c.value("name", ""), c.value("truth_pixels", 0),
                      c.value("predicted_pixels", 0), percent(c["producers_accuracy"]), percent(c["users_accuracy"]));
  return md + "\n";
}

}  // namespace

std::string report_markdown(const JobSpec& job, const std::vector<const SceneSpec*>& scenes, const Manifest& manifest) {
  std::string md = fmt::format("# Run report: {}\n\n", job.name);
  int failed = 0;
  for (const auto* s : scenes) failed += failure_of(manifest, s->name) != nullptr ? 1 : 0;
  md += fmt::format("{} scenes: {} complete, {} failed. Timings and throughput: [metrics.json](metrics.json); "
                    "what finished: [manifest.json](manifest.json).\n\n",
                    scenes.size(), static_cast<int>(scenes.size()) - failed, failed);
  if (const auto* basis = manifest.find("campaign", "mnf-basis"); basis != nullptr && basis->status == "done")
    md += "MNF basis: one campaign-wide basis from all scenes ([campaign/mnf_basis.h5](campaign/mnf_basis.h5)).\n\n";
  md += "| scene | status | overall accuracy % | kappa |\n|---|---|---|---|\n";
  for (const auto* s : scenes) {
    const auto* f = failure_of(manifest, s->name);
    const auto* knn = manifest.find(s->name, "knn");
    const bool has_accuracy = f == nullptr && knn != nullptr && knn->summary.contains("accuracy") &&
                              knn->summary["accuracy"].is_object();
    md += fmt::format("| {} | {} | {} | {} |\n", s->name, f != nullptr ? "failed (" + f->step + ")" : "complete",
                      has_accuracy ? percent(knn->summary["accuracy"]["overall_accuracy"]) : "-",
                      has_accuracy ? fmt::format("{:.4f}", knn->summary["accuracy"].value("kappa", NAN)) : "-");
  }
  md += "\n";
  if (failed > 0) {
    md += "## Failed scenes\n\nA rerun retries them; the other scenes are not redone.\n\n| scene | step | error |\n|---|---|---|\n";
    for (const auto* s : scenes)
      if (const auto* f = failure_of(manifest, s->name)) md += fmt::format("| {} | {} | {} |\n", s->name, f->step, f->error);
    md += "\n";
  }
  for (const auto* s : scenes) {
    if (failure_of(manifest, s->name) != nullptr) continue;
    // Paths inside the output folder are written relative to it: the report moves with the folder.
    const auto source = fs::path(s->path).lexically_relative(job.output);
    const bool inside = !source.empty() && *source.begin() != "..";
    md += fmt::format("## {}\n\nSource: `{}`\n\n", s->name, inside ? source.string() : s->path);
    if (const auto* q = manifest.find(s->name, "quicklooks"); q != nullptr && q->status == "done")
      for (const auto& out : q->outputs)
        md += fmt::format("![{}]({})\n", out.find("mnf") != std::string::npos ? "MNF components 1-3" : "class map", out);
    md += "\n";
    if (const auto* knn = manifest.find(s->name, "knn"); knn != nullptr && knn->status == "done")
      md += accuracy_section(knn->summary);
  }
  return md;
}

Result<int> finish_run(const JobSpec& job, const std::vector<const SceneSpec*>& scenes, const FinishOptions& o,
                       const nlohmann::json& metrics) {
  const std::string metrics_name = o.sharded ? fmt::format("metrics-shard{}.json", o.shard) : "metrics.json";
  HB_TRY(io::write_text_file((fs::path(job.output) / metrics_name).string(), metrics.dump(2) + "\n"));
  auto manifest = Manifest::load(job.output);
  if (!manifest) return manifest.error();
  drop_stale_failures(*manifest, scenes, o.run_start_ns);
  HB_TRY(manifest->save(job.name));
  // Journals are merged into manifest.json now; array tasks may still be appending to theirs.
  // Oldest first (run ids begin with the start time): if this is cut short, the journals
  // left are the newest, whose entries rightly win over manifest.json's.
  std::error_code ec;
  std::vector<fs::path> run_files;
  for (const auto& f : fs::directory_iterator(journal_dir(job.output), ec)) run_files.push_back(f.path());
  std::sort(run_files.begin(), run_files.end());
  for (const auto& path : run_files) {
    const bool ours = path.filename().string().rfind(o.run_id, 0) == 0;
    const bool run_file = path.extension() == ".progress" || path.extension() == ".jsonl";
    if (run_file && (ours ? path.extension() == ".progress" || !o.sharded : !o.sharded)) fs::remove(path, ec);
  }
  int failed = 0;
  for (const auto* s : scenes) failed += failure_of(*manifest, s->name) != nullptr ? 1 : 0;
  if (job.report && !o.sharded)
    HB_TRY(io::write_text_file((fs::path(job.output) / "report.md").string(),
                                     report_markdown(job, scenes, *manifest)));
  return failed;
}

}  // namespace hb::jobs
