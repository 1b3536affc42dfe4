#include "jobs/progress.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace hb::jobs {
namespace fs = std::filesystem;
namespace {

constexpr auto kLogInterval = std::chrono::seconds(10);
constexpr auto kBarInterval = std::chrono::milliseconds(250);

std::string clock_text(double seconds) {
  const auto s = static_cast<long long>(seconds);
  return s >= 3600 ? fmt::format("{}h{:02}m", s / 3600, s / 60 % 60) : fmt::format("{}m{:02}s", s / 60, s % 60);
}

}  // namespace

RunProgress::RunProgress(std::string dir, std::string run_id, int rank, int total_scenes, std::int64_t total_bytes,
                         bool show)
    : dir_(std::move(dir)), run_id_(std::move(run_id)), rank_(rank), total_scenes_(total_scenes),
      total_bytes_(total_bytes), show_(show && rank == 0 && spdlog::should_log(spdlog::level::info)),
      terminal_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()), last_(start_) {}

void RunProgress::publish(int scenes_done, std::int64_t bytes_done, const std::string& current) {
  current_ = current;
  std::ofstream(fs::path(dir_) / (run_id_ + "-rank" + std::to_string(rank_) + ".progress"), std::ios::trunc)
      << scenes_done << " " << bytes_done << " " << current << "\n";
  tick();
}

void RunProgress::tick(bool force) {
  if (!show_) return;
  const auto now = std::chrono::steady_clock::now();
  const auto interval = terminal_ ? std::chrono::duration_cast<std::chrono::steady_clock::duration>(kBarInterval)
                                  : std::chrono::duration_cast<std::chrono::steady_clock::duration>(kLogInterval);
  if (!force && now - last_ < interval) return;
  last_ = now;
  int done = 0;
  std::int64_t bytes = 0;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(dir_, ec)) {
    const auto name = f.path().filename().string();
    if (f.path().extension() != ".progress" || name.rfind(run_id_, 0) != 0) continue;
    int d = 0;
    std::int64_t b = 0;
    if (std::ifstream(f.path()) >> d >> b) done += d, bytes += b;
  }
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double fraction = total_bytes_ > 0 ? static_cast<double>(bytes) / static_cast<double>(total_bytes_) : 0.0;
  const double rate = elapsed > 0 ? static_cast<double>(bytes) / 1e6 / elapsed : 0.0;
  const std::string eta = fraction > 0 ? clock_text(elapsed * (1 - fraction) / fraction) : "?";
  if (terminal_) {
    constexpr int kWidth = 24;
    const int filled = static_cast<int>(fraction * kWidth);
    std::fprintf(stderr, "\r[%-*s] %d/%d scenes, %s, %.1f MB/s, ETA %s\x1b[K", kWidth,
                 std::string(static_cast<std::size_t>(filled), '#').c_str(), done, total_scenes_, current_.c_str(), rate,
                 eta.c_str());
    std::fflush(stderr);
  } else {
    spdlog::info("progress: {}/{} scenes, {}, {:.1f} MB/s, ETA {}", done, total_scenes_, current_, rate, eta);
  }
}

void RunProgress::finish() {
  if (!show_) return;
  tick(true);
  if (terminal_) std::fprintf(stderr, "\n");
}

}  // namespace hb::jobs
