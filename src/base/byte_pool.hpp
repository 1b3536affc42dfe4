// Byte buffers reused between reads on any thread: a fresh buffer pays its page faults
// (and zeroing) on every use, a reused one only the first time.
#pragma once

#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

namespace hb {

class BytePool {
 public:
  using Bytes = std::vector<std::byte>;

  // A buffer of `bytes`, reused when one was given back.
  Bytes take(std::size_t bytes) {
    Bytes buffer;
    {
      const std::lock_guard lock(mutex_);
      if (!free_.empty()) {
        buffer = std::move(free_.back());
        free_.pop_back();
      }
    }
    buffer.resize(bytes);
    return buffer;
  }

  void give(Bytes buffer) {
    if (buffer.capacity() == 0) return;
    const std::lock_guard lock(mutex_);
    free_.push_back(std::move(buffer));
  }

 private:
  std::mutex mutex_;
  std::vector<Bytes> free_;
};

}  // namespace hb
