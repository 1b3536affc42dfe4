#include "io/write_behind.hpp"

#include <chrono>

namespace hb::io {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

WriteBehind::~WriteBehind() {
  if (pending_.valid()) pending_.wait();
}

bool may_write_behind(const Cube& in, const CubeWriter& out) {
  return !out.writes_in_step() && !(in.reads_through_hdf5() && out.writes_through_hdf5());
}

std::span<std::byte> WriteBehind::next_bytes(std::size_t bytes) {
  auto& buffer = buffers_[current_];
  buffer.resize(bytes);
  filled_ = bytes;
  return buffer;
}

std::span<float> WriteBehind::next_buffer(std::size_t count) {
  return {reinterpret_cast<float*>(next_bytes(count * sizeof(float)).data()), count};
}

Status WriteBehind::finish(double& wait_seconds) {
  if (!pending_.valid()) return {};
  const auto start = std::chrono::steady_clock::now();
  const Status previous = pending_.get();
  wait_seconds += seconds_since(start);
  return previous;
}

Status WriteBehind::write(RowRange rows, double& wait_seconds) {
  const std::span<const std::byte> bytes(buffers_[current_].data(), filled_);
  if (!background_) {
    const auto start = std::chrono::steady_clock::now();
    const Status written = writer_.write_rows(rows, bytes);
    wait_seconds += seconds_since(start);
    return written;
  }
  HB_TRY(finish(wait_seconds));  // the other buffer is free once its write is done
  pending_ = std::async(std::launch::async, [this, rows, bytes] { return writer_.write_rows(rows, bytes); });
  current_ ^= 1;
  return {};
}

}  // namespace hb::io
