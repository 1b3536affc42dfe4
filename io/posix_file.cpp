#include "io/posix_file.hpp"

#include "src/base/parallel_for.hpp"
#include "src/base/worker_pool.hpp"

#include <algorithm>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <utility>

namespace hb::io {
namespace {

// "write failed: no space left on device": lower case, as the rest of an error line.
std::string os_error(const char* what) {
  std::string cause = std::strerror(errno);
  if (!cause.empty()) cause[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(cause[0])));
  return std::string(what) + ": " + cause;
}

// Pieces of at least 2 MiB, at most 16 threads (never more than the rank's share of the
// host's cores): with 16 of the worker pool's threads on a 38 MB statistics tile, the
// `mnf` command's pass over a flightline ran 10-15 % faster on one GPU than with 8, and
// as fast inside `hyperbatch run` (docs/PERFORMANCE.md).
constexpr std::size_t kParallelPieceBytes = std::size_t{2} << 20;
constexpr std::size_t kWritebackBytes = std::size_t{256} << 10;

unsigned read_threads_for(std::size_t bytes) {
  const auto cores = static_cast<unsigned>(host_threads());
  const auto pieces = static_cast<unsigned>(std::min<std::size_t>(bytes / kParallelPieceBytes, 16));
  return std::max(1u, std::min(pieces, cores));
}

}  // namespace

PosixFile::~PosixFile() {
  if (fd_ >= 0) ::close(fd_);
}

PosixFile::PosixFile(PosixFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), path_(std::move(other.path_)), size_(other.size_) {}

PosixFile& PosixFile::operator=(PosixFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    path_ = std::move(other.path_);
    size_ = other.size_;
  }
  return *this;
}

Result<PosixFile> PosixFile::open_read(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error(path, os_error("cannot open"));
  PosixFile file(fd, path, 0);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return io_error(path, os_error("cannot stat"));
  if (!S_ISREG(st.st_mode)) return io_error(path, "cannot read: not a regular file");
  file.size_ = static_cast<std::int64_t>(st.st_size);
  return file;
}

Result<PosixFile> PosixFile::open_write(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return io_error(path, os_error("cannot open for writing"));
  return PosixFile(fd, path, 0);
}

Result<PosixFile> PosixFile::create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error(path, os_error("cannot create"));
  return PosixFile(fd, path, 0);
}

Status PosixFile::read_at(std::int64_t offset, std::span<std::byte> out) const {
  const unsigned threads = read_threads_for(out.size());
  if (threads == 1) return read_serial(offset, out);
  const std::size_t piece = (out.size() + threads - 1) / threads;
  std::vector<Status> results(threads);
  run_pieces(threads, [&](unsigned t) {
    const std::size_t begin = std::min(out.size(), piece * t);
    const std::size_t size = std::min(piece, out.size() - begin);
    results[t] = read_serial(offset + static_cast<std::int64_t>(begin), out.subspan(begin, size));
  });
  for (const auto& result : results)
    if (!result) return result;
  return {};
}

Status PosixFile::read_serial(std::int64_t offset, std::span<std::byte> out) const {
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::pread(fd_, out.data() + done, out.size() - done, static_cast<off_t>(offset) + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error(path_, os_error("read failed"));
    if (n == 0)
      return io_error(path_, "unexpected end of file at byte " + std::to_string(offset + static_cast<std::int64_t>(done)) +
                                 " (was the file truncated while open?)");
    done += static_cast<std::size_t>(n);
  }
  return {};
}

Status PosixFile::write_at(std::int64_t offset, std::span<const std::byte> data) const {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done, static_cast<off_t>(offset) + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error(path_, os_error("write failed"));
    if (n == 0) return io_error(path_, "write failed: no progress (disk full?)");
    done += static_cast<std::size_t>(n);
  }
  start_writeback(offset, data.size());
  return {};
}

// Large writes start their way to disk now, so that the fsync of commit finds little
// left to do instead of flushing gigabytes at the end of a run.
void PosixFile::start_writeback(std::int64_t offset, std::size_t bytes) const {
#ifdef __linux__
  if (bytes >= kWritebackBytes)
    ::sync_file_range(fd_, static_cast<off_t>(offset), static_cast<off_t>(bytes), SYNC_FILE_RANGE_WRITE);
#else
  (void)offset;
  (void)bytes;
#endif
}

Status PosixFile::resize(std::int64_t bytes) {
  if (::ftruncate(fd_, static_cast<off_t>(bytes)) != 0) return io_error(path_, os_error("cannot set the file size"));
  size_ = bytes;
  return {};
}

Status PosixFile::reserve(std::int64_t offset, std::int64_t bytes) const {
#ifdef __linux__
  if (bytes <= 0) return {};
  int result = 0;
  do {
    result = ::fallocate(fd_, 0, static_cast<off_t>(offset), static_cast<off_t>(bytes));
  } while (result != 0 && errno == EINTR);
  if (result == 0 || errno == EOPNOTSUPP || errno == ENOSYS) return {};
  if (errno == ENOSPC)
    return io_error(path_, "no space left for the output (" + std::to_string(bytes) + " bytes at byte " +
                               std::to_string(offset) + ")");
  return io_error(path_, os_error("cannot reserve space"));
#else
  (void)offset;
  (void)bytes;
  return {};
#endif
}

Status PosixFile::sync_and_close() {
  const int fd = std::exchange(fd_, -1);
  if (fd < 0) return {};
  if (::fsync(fd) != 0) {
    const std::string failure = os_error("cannot flush to disk");
    ::close(fd);
    return io_error(path_, failure);
  }
  if (::close(fd) != 0) return io_error(path_, os_error("cannot close"));
  return {};
}

}  // namespace hb::io
