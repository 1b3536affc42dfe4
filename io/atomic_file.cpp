#include "io/atomic_file.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

namespace hb::io {
namespace {

constexpr std::string_view kTemporaryMark = ".tmp.";

struct LiveTemporaries {
  std::mutex mutex;
  std::vector<std::string> paths;
};

LiveTemporaries& live() {
  static LiveTemporaries* list = new LiveTemporaries;  // never destroyed: signals may come at exit
  return *list;
}

bool process_runs(long pid) { return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH; }

// The pid of a temporary's name "[.]+FINAL.tmp.PID[...]" for FINAL = `final_name`, or -1.
long temporary_owner(std::string_view name, std::string_view final_name) {
  const auto first = name.find_first_not_of('.');
  if (first == 0 || first == std::string_view::npos) return -1;
  name.remove_prefix(first);
  if (!name.starts_with(final_name)) return -1;
  name.remove_prefix(final_name.size());
  if (!name.starts_with(kTemporaryMark)) return -1;
  name.remove_prefix(kTemporaryMark.size());
  long pid = -1;
  const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (error != std::errc() || end == name.data() || (end != name.data() + name.size() && *end != '.')) return -1;
  return pid;
}

}  // namespace

std::string temporary_path(const std::string& final_path, const std::string& tag) {
  const std::filesystem::path p(final_path);
  auto name = "." + p.filename().string() + std::string(kTemporaryMark) + std::to_string(::getpid());
  if (!tag.empty()) name += "." + tag;
  return (p.parent_path() / name).string();
}

void track_temporary(const std::string& path) {
  const std::lock_guard lock(live().mutex);
  live().paths.push_back(path);
}

void untrack_temporary(const std::string& path) {
  const std::lock_guard lock(live().mutex);
  auto& paths = live().paths;
  if (const auto it = std::find(paths.rbegin(), paths.rend(), path); it != paths.rend())
    paths.erase(std::next(it).base());
}

int remove_live_temporaries() {
  const std::lock_guard lock(live().mutex);
  int removed = 0;
  for (const auto& path : live().paths) removed += ::unlink(path.c_str()) == 0 ? 1 : 0;
  live().paths.clear();
  return removed;
}

int remove_stale_temporaries(const std::string& final_path) {
  const std::filesystem::path p(final_path);
  const std::string final_name = p.filename().string();
  const auto folder = p.parent_path().empty() ? std::filesystem::path(".") : p.parent_path();
  std::error_code ec;
  int removed = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    const long owner = temporary_owner(name, final_name);
    if (owner <= 0 || owner == ::getpid() || process_runs(owner)) continue;
    removed += std::filesystem::remove(entry.path(), ec) ? 1 : 0;
  }
  return removed;
}

AtomicPath::AtomicPath(std::string final_path)
    : final_(std::move(final_path)), temporary_(temporary_path(final_)) {
  remove_stale_temporaries(final_);
  track_temporary(temporary_);
}

AtomicPath::AtomicPath(AtomicPath&& other) noexcept
    : final_(std::move(other.final_)), temporary_(std::move(other.temporary_)), done_(other.done_) {
  other.done_ = true;
}

AtomicPath::~AtomicPath() { abandon(); }

Status AtomicPath::commit() {
  if (done_) return io_error(final_, "output already committed or abandoned");
  if (std::rename(temporary_.c_str(), final_.c_str()) != 0)
    return io_error(final_, std::string("cannot rename from temporary file: ") + std::strerror(errno));
  untrack_temporary(temporary_);
  done_ = true;
  return {};
}

void AtomicPath::abandon() {
  if (done_) return;
  std::remove(temporary_.c_str());
  untrack_temporary(temporary_);
  done_ = true;
}

}  // namespace hb::io
