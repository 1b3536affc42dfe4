#include "src/cli/progress.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>

namespace hb::cli {
namespace {

constexpr auto kTerminalRefresh = std::chrono::milliseconds(200);
constexpr auto kLogInterval = std::chrono::seconds(10);

double seconds_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

}  // namespace

ProgressReporter::ProgressReporter(std::string what, std::string unit, bool enabled)
    : what_(std::move(what)), unit_(std::move(unit)), enabled_(enabled && spdlog::should_log(spdlog::level::info)),
      terminal_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()), last_(start_) {}

// A run that fails says so in its one error line: no summary line of the rows done.
ProgressReporter::~ProgressReporter() {
  if (!finished_ && enabled_ && terminal_ && total_ > 0) std::fprintf(stderr, "\n");
}

void ProgressReporter::update(std::int64_t done, std::int64_t total) {
  done_ = done;
  total_ = total;
  if (!enabled_ || total <= 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < (terminal_ ? std::chrono::duration_cast<std::chrono::steady_clock::duration>(kTerminalRefresh)
                               : std::chrono::duration_cast<std::chrono::steady_clock::duration>(kLogInterval)) &&
      done < total)
    return;
  last_ = now;
  const double fraction = static_cast<double>(done) / static_cast<double>(total);
  const double elapsed = seconds_between(start_, now);
  const double eta = fraction > 0 ? elapsed * (1 - fraction) / fraction : 0;
  if (terminal_) {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth);
    std::fprintf(stderr, "\r%s [%-*s] %5.1f%% %lld/%lld %s, ETA %.0fs ", what_.c_str(), kWidth,
                 std::string(static_cast<std::size_t>(filled), '#').c_str(), 100 * fraction,
                 static_cast<long long>(done), static_cast<long long>(total), unit_.c_str(), eta);
    std::fflush(stderr);
  } else {
    spdlog::info("{}: {}/{} {} ({:.1f}%), ETA {:.0f}s", what_, done, total, unit_, 100 * fraction, eta);
  }
}

void ProgressReporter::finish() {
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  if (terminal_ && total_ > 0) std::fprintf(stderr, "\n");
  spdlog::info("{}: {} {} in {:.2f}s", what_, done_, unit_,
               seconds_between(start_, std::chrono::steady_clock::now()));
}

}  // namespace hb::cli
