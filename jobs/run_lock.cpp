#include "jobs/run_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include <fmt/core.h>

#include "jobs/manifest.hpp"  // journal_dir
#include "mpi/comm.hpp"       // host_name

namespace hb::jobs {
namespace fs = std::filesystem;
namespace {

std::string read_all(int fd) {
  std::string text(256, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\0')) text.pop_back();
  return text;
}

// The holder writes its line just after locking: give it a moment before saying "unknown".
std::string holder_of(int fd) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::string text = read_all(fd);
    if (!text.empty()) return text;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return "an unknown process";
}

Status record_holder(int fd, const std::string& lock_file) {
  const std::string line = fmt::format("host {} pid {}\n", mpi::host_name(), ::getpid());
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size()))
    return io_error(lock_file, std::string("cannot write the lock file: ") + std::strerror(errno));
  return {};
}

}  // namespace

Result<RunLock> RunLock::acquire(const std::string& lock_file, const std::string& what, Mode mode) {
  const int fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return io_error(lock_file, std::string("cannot open the lock file: ") + std::strerror(errno));
  RunLock lock(fd);
  if (::flock(fd, (mode == Mode::exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK) return io_error(lock_file, std::string("cannot lock: ") + std::strerror(errno));
    return io_error(what, "another hyperbatch run is using it (" + holder_of(fd) + "; lock " + lock_file +
                              "): wait for it to finish or stop it");
  }
  HB_TRY(record_holder(fd, lock_file));
  return lock;
}

RunLock::RunLock(RunLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

RunLock& RunLock::operator=(RunLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

// Closing drops the lock. The file stays: removing it would let a third run lock a new
// file while a second, which opened the old one, locks that: two holders.
RunLock::~RunLock() {
  if (fd_ >= 0) ::close(fd_);
}

std::string folder_lock_path(const std::string& output_dir) {
  return (fs::path(output_dir) / "hyperbatch.lock").string();
}

std::string shard_lock_path(const std::string& output_dir, int shard, int shards) {
  return (fs::path(journal_dir(output_dir)) / fmt::format("shard-{}-of-{}.lock", shard, shards)).string();
}

}  // namespace hb::jobs
