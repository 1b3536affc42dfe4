// Stage times for the logs: seconds() since the start, or lap(): the seconds since
// the last lap (or the start), restarting the lap.
#pragma once

#include <chrono>
#include <utility>

namespace hb {

class Stopwatch {
 public:
  double seconds() const { return since(start_); }
  double lap() { return since(std::exchange(last_, Clock::now())); }

 private:
  using Clock = std::chrono::steady_clock;
  static double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = start_;
};

}  // namespace hb
