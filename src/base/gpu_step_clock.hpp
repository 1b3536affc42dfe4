// GPU seconds by step, from a pair of events recorded on a stream around each step's
// launches and read once the stream has passed them (collect()). Off unless asked for
// (a debug log): two event records a step cost the host a few microseconds.
#pragma once

#include <cuda_runtime.h>

#include <array>
#include <vector>

namespace hb::cuda {

template <int Steps>
class GpuStepClock {
 public:
  GpuStepClock() = default;
  ~GpuStepClock() {
    for (const auto& p : pending_) free_.insert(free_.end(), {p.start, p.end});
    for (auto* e : free_) cudaEventDestroy(e);
  }
  GpuStepClock(const GpuStepClock&) = delete;
  GpuStepClock& operator=(const GpuStepClock&) = delete;

  void enable(bool on) { on_ = on; }
  // Marks a step's start on `stream`; end() with the same stream marks its end.
  void begin(cudaStream_t stream) {
    if (!on_) return;
    open_ = {event(), event(), 0};
    cudaEventRecord(open_.start, stream);
  }
  void end(cudaStream_t stream, int step) {
    if (!on_ || open_.start == nullptr) return;
    open_.step = step;
    cudaEventRecord(open_.end, stream);
    pending_.push_back(open_);
    open_ = {};
  }
  // Adds the steps recorded so far (waiting for each to finish) to the seconds.
  void collect() {
    for (const auto& p : pending_) {
      float ms = 0.0f;
      if (cudaEventSynchronize(p.end) == cudaSuccess && cudaEventElapsedTime(&ms, p.start, p.end) == cudaSuccess)
        seconds_[p.step] += ms / 1e3;
      free_.insert(free_.end(), {p.start, p.end});
    }
    pending_.clear();
    cudaGetLastError();
  }
  const std::array<double, Steps>& seconds() const { return seconds_; }

 private:
  struct Pair {
    cudaEvent_t start = nullptr, end = nullptr;
    int step = 0;
  };
  cudaEvent_t event() {
    cudaEvent_t e = nullptr;
    if (!free_.empty()) {
      e = free_.back();
      free_.pop_back();
    } else {
      cudaEventCreate(&e);
    }
    return e;
  }

  bool on_ = false;
  Pair open_;
  std::vector<Pair> pending_;
  std::vector<cudaEvent_t> free_;
  std::array<double, Steps> seconds_{};
};

}  // namespace hb::cuda
