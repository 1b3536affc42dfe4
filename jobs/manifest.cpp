#include "jobs/manifest.hpp"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "io/text_file.hpp"

namespace hb::jobs {
namespace fs = std::filesystem;
namespace {

std::string key_of(const std::string& scene, const std::string& step) { return scene + "/" + step; }

void merge(std::map<std::string, ManifestEntry>& into, ManifestEntry e) {
  const std::string key = key_of(e.scene, e.step);
  auto at = into.find(key);
  if (at == into.end() || at->second.finished_ns <= e.finished_ns) into[key] = std::move(e);
}

// A journal's last line may be torn by a kill: every line that parses counts.
void read_journal(const fs::path& path, std::map<std::string, ManifestEntry>& into) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("scene") && j.contains("step")) merge(into, entry_from_json(j));
  }
}

}  // namespace

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string journal_dir(const std::string& output_dir) { return (fs::path(output_dir) / "manifest.d").string(); }

nlohmann::json to_json(const ManifestEntry& e) {
  nlohmann::json j{{"scene", e.scene},       {"step", e.step},       {"status", e.status},
                   {"checksum", e.checksum}, {"outputs", e.outputs}, {"finished_ns", e.finished_ns}};
  if (!e.error.empty()) j["error"] = e.error;
  if (!e.summary.is_null()) j["summary"] = e.summary;
  return j;
}

ManifestEntry entry_from_json(const nlohmann::json& j) {
  ManifestEntry e;
  e.scene = j.value("scene", "");
  e.step = j.value("step", "");
  e.status = j.value("status", "");
  e.checksum = j.value("checksum", "");
  e.outputs = j.value("outputs", std::vector<std::string>{});
  e.error = j.value("error", "");
  e.finished_ns = j.value("finished_ns", std::int64_t{0});
  if (j.contains("summary")) e.summary = j["summary"];
  return e;
}

Result<Manifest> Manifest::load(const std::string& output_dir) {
  Manifest m;
  m.dir_ = output_dir;
  const fs::path main = fs::path(output_dir) / "manifest.json";
  if (fs::exists(main)) {
    std::ifstream in(main);
    const auto j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_object() || !j.contains("entries")) return bad_input(main.string(), "entries", "not a hyperbatch manifest");
    for (const auto& e : j["entries"]) merge(m.entries_, entry_from_json(e));
  }
  std::error_code ec;
  if (fs::is_directory(journal_dir(output_dir), ec)) {
    std::vector<fs::path> journals;
    for (const auto& f : fs::directory_iterator(journal_dir(output_dir)))
      if (f.path().extension() == ".jsonl") journals.push_back(f.path());
    std::sort(journals.begin(), journals.end());
    for (const auto& p : journals) read_journal(p, m.entries_);
  }
  return m;
}

const ManifestEntry* Manifest::find(const std::string& scene, const std::string& step) const {
  auto at = entries_.find(key_of(scene, step));
  return at == entries_.end() ? nullptr : &at->second;
}

bool Manifest::is_done(const std::string& scene, const std::string& step, const std::string& checksum) const {
  const ManifestEntry* e = find(scene, step);
  if (e == nullptr || e->status != "done" || e->checksum != checksum) return false;
  for (const auto& out : e->outputs)
    if (!fs::exists(fs::path(dir_) / out)) return false;
  return true;
}

void Manifest::remove(const std::string& scene, const std::string& step) { entries_.erase(key_of(scene, step)); }

void Manifest::record(ManifestEntry entry) { merge(entries_, std::move(entry)); }

Status Manifest::save(const std::string& job_name) const {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [key, e] : entries_) {
    auto entry = to_json(e);
    entry.erase("finished_ns");
    list.push_back(std::move(entry));
  }
  const nlohmann::json j{{"format", "hyperbatch-manifest/1"}, {"job", job_name}, {"entries", list}};
  return io::write_text_file((fs::path(dir_) / "manifest.json").string(), j.dump(2) + "\n");
}

Journal::Journal(const std::string& output_dir, const std::string& run_id, int rank) {
  std::error_code ec;
  fs::create_directories(journal_dir(output_dir), ec);
  path_ = (fs::path(journal_dir(output_dir)) / (run_id + "-rank" + std::to_string(rank) + ".jsonl")).string();
  file_ = std::fopen(path_.c_str(), "a");
}

Journal::~Journal() {
  if (file_ != nullptr) std::fclose(file_);
}

Status Journal::append(const ManifestEntry& entry) {
  if (file_ == nullptr) return io_error(path_, "cannot open the manifest journal");
  const std::string line = to_json(entry).dump() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0 ||
      ::fsync(::fileno(file_)) != 0)
    return io_error(path_, "cannot append to the manifest journal");
  return {};
}

}  // namespace hb::jobs
