#include "io/atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

namespace hb::io {
namespace {

// Hidden, unique per process, in the same directory so that rename() is atomic.
std::string temporary_name(const std::string& final_path) {
  std::filesystem::path p(final_path);
  auto name = "." + p.filename().string() + ".tmp." + std::to_string(::getpid());
  return (p.parent_path() / name).string();
}

}  // namespace

AtomicPath::AtomicPath(std::string final_path)
    : final_(std::move(final_path)), temporary_(temporary_name(final_)) {}

AtomicPath::AtomicPath(AtomicPath&& other) noexcept
    : final_(std::move(other.final_)), temporary_(std::move(other.temporary_)), done_(other.done_) {
  other.done_ = true;
}

AtomicPath::~AtomicPath() { abandon(); }

Status AtomicPath::commit() {
  if (done_) return io_error(final_, "output already committed or abandoned");
  if (std::rename(temporary_.c_str(), final_.c_str()) != 0)
    return io_error(final_, std::string("cannot rename from temporary file: ") + std::strerror(errno));
  done_ = true;
  return {};
}

void AtomicPath::abandon() {
  if (done_) return;
  std::remove(temporary_.c_str());
  done_ = true;
}

}  // namespace hb::io
