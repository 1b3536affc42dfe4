// How long a classification pass takes to start: its search, voter and query reader
// made, then its first tile read and searched (the select probe runs on that tile).
// These seconds do not divide over ranks; the debug log shows them apart so that the
// distributed runs' fixed part can be read off, step by step.
#pragma once

#include <spdlog/spdlog.h>

#include <string>
#include <string_view>

#include <fmt/core.h>

#include "src/base/stopwatch.hpp"

namespace hb::knn {

class SetupTimes {
 public:
  // The step just done, with the seconds since the previous mark.
  void made(std::string_view step) { steps_ += fmt::format("{} {:.3f} s, ", step, clock_.lap()); }
  // After each tile: logs the set-up once, with the first tile's times.
  void tile_done(std::string_view who, double read, double searched) {
    if (logged_) return;
    logged_ = true;
    spdlog::debug("{} set-up: {}first tile read {:.3f} s and searched {:.3f} s, {:.3f} s in all", who, steps_, read,
                  searched, clock_.seconds());
  }

 private:
  Stopwatch clock_;
  std::string steps_;
  bool logged_ = false;
};

}  // namespace hb::knn
