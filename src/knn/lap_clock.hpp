// Stage times for the classification logs: each lap() is the seconds since the last one.
#pragma once

#include <chrono>
#include <utility>

namespace hb::knn {

class LapClock {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(now - std::exchange(last_, now)).count();
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace hb::knn
