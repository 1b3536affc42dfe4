// Progress of long work: a bar redrawn in place on a terminal, otherwise a plain log
// line every few seconds (batch logs stay readable). Silent when quiet.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace hb::cli {

class ProgressReporter {
 public:
  ProgressReporter(std::string what, std::string unit, bool enabled);
  ~ProgressReporter();
  void update(std::int64_t done, std::int64_t total);
  void finish();

 private:
  std::string what_;
  std::string unit_;
  bool enabled_;
  bool terminal_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
  std::int64_t done_ = 0;
  std::int64_t total_ = 0;
};

}  // namespace hb::cli
