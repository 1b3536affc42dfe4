// A file descriptor with whole-buffer positional reads and writes (pread/pwrite loop
// over short transfers and EINTR). No shared seek position, so const reads are
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "src/base/error.hpp"

namespace hb::io {

class PosixFile {
 public:
  PosixFile() = default;
  ~PosixFile();
  PosixFile(PosixFile&& other) noexcept;
  PosixFile& operator=(PosixFile&& other) noexcept;
  PosixFile(const PosixFile&) = delete;
  PosixFile& operator=(const PosixFile&) = delete;

  // Regular files only: a directory or device is an io error naming `path`.
  static Result<PosixFile> open_read(const std::string& path);
  static Result<PosixFile> create(const std::string& path);  // truncates
  static Result<PosixFile> open_write(const std::string& path);  // an existing file, kept as is

  const std::string& path() const { return path_; }
  std::int64_t size() const { return size_; }  // at open time
  // Large reads are split over a few threads: one pread stream from the page cache
  // moves ~5 GB/s, well below memory bandwidth (docs/PERFORMANCE.md, MNF).
  Status read_at(std::int64_t offset, std::span<std::byte> out) const;
  Status write_at(std::int64_t offset, std::span<const std::byte> data) const;
  Status resize(std::int64_t bytes);
  // Allocates [offset, offset + bytes) now (Linux fallocate): a full disk fails here,
  // and later writes there allocate nothing. A no-op where the file system cannot.
  Status reserve(std::int64_t offset, std::int64_t bytes) const;
  Status sync_and_close();

 private:
  PosixFile(int fd, std::string path, std::int64_t size) : fd_(fd), path_(std::move(path)), size_(size) {}
  Status read_serial(std::int64_t offset, std::span<std::byte> out) const;
  void start_writeback(std::int64_t offset, std::size_t bytes) const;
  int fd_ = -1;
  std::string path_;
  std::int64_t size_ = 0;
};

}  // namespace hb::io
