// Writes row blocks on a background thread while the caller computes (or reads) the
// next one: two buffers, one being filled, one being written. Writing in the caller's
// thread is the fallback where a second thread may not touch the file: HDF5 (not
// thread-safe) in use by the caller too, or collective writes that every rank must make
// in step (may_write_behind).
#pragma once

#include <array>
#include <cstddef>
#include <future>
#include <span>
#include <vector>

#include "io/cube.hpp"

namespace hb::io {

// Whether `out` may be written on a second thread while the caller reads `in`.
bool may_write_behind(const Cube& in, const CubeWriter& out);

class WriteBehind {
 public:
  WriteBehind(CubeWriter& writer, bool background) : writer_(writer), background_(background) {}
  ~WriteBehind();
  WriteBehind(const WriteBehind&) = delete;
  WriteBehind& operator=(const WriteBehind&) = delete;

  // A buffer of `count` floats (or `bytes`) to fill; it is not being written.
  std::span<float> next_buffer(std::size_t count);
  std::span<std::byte> next_bytes(std::size_t bytes);
  // Writes the buffer last returned by next_buffer as `rows`. Reports the failure of
  // an earlier background write, if any; `wait_seconds` grows by the time spent blocked.
  Status write(RowRange rows, double& wait_seconds);
  // Waits for the last write.
  Status finish(double& wait_seconds);

 private:
  CubeWriter& writer_;
  bool background_;
  std::array<std::vector<std::byte>, 2> buffers_;  // operator new's alignment: floats too
  std::size_t current_ = 0;
  std::size_t filled_ = 0;
  std::future<Status> pending_;
};

}  // namespace hb::io
