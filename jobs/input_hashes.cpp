#include "jobs/input_hashes.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "io/text_file.hpp"
#include "src/base/parallel_for.hpp"

namespace hb::jobs {
namespace fs = std::filesystem;
namespace {

constexpr std::uint64_t kFnvOffset = 14695981039346656037ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;
constexpr std::int64_t kSettledNs = 2'000'000'000;  // coarse file-system clocks tick in seconds

std::int64_t ns_of(const struct timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

// What must stay the same for a remembered hash to hold.
std::string identity(const struct stat& st) {
  return fmt::format("{}:{}:{}:{}:{}", st.st_dev, st.st_ino, st.st_size, ns_of(st.st_mtim), ns_of(st.st_ctim));
}

struct Hashed {
  std::string hash;
  std::string identity_after;  // the file's identity once read: differs when it changed meanwhile
};

constexpr std::int64_t kPieceBytes = std::int64_t{64} << 20;  // a multiple of 8: words never straddle pieces
// Small enough to stay in a core's L2 between the read's copy and the hash: the hash
// then costs the host one pass over memory (the page cache) instead of three (page cache,
// buffer written, buffer read back), while a GPU rank beside it reads the same scene.
constexpr std::size_t kReadBytes = std::size_t{256} << 10;

// FNV-1a over the 8-byte words of bytes [begin, end) of the file (then its tail bytes);
// false on a read error or a short file.
bool hash_piece(int fd, std::int64_t begin, std::int64_t end, std::uint64_t& h) {
  std::vector<unsigned char> buffer(kReadBytes);
  h = kFnvOffset;
  for (std::int64_t at = begin; at < end;) {
    const auto want = static_cast<std::size_t>(std::min<std::int64_t>(end - at, kReadBytes));
    const ssize_t got = ::pread(fd, buffer.data(), want, at);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    const auto n = static_cast<std::size_t>(got);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, buffer.data() + i, 8);
      h = (h ^ word) * kFnvPrime;
    }
    for (; i < n; ++i) h = (h ^ buffer[i]) * kFnvPrime;
    at += got;
  }
  return true;
}

// The file cut into 64 MiB pieces, each hashed (FNV-1a over 8-byte words) on its own
// thread, and the pieces' hashes folded in order with the length: one core hashed about
// 3 GB/s, a third of a 5 GB flightline's time in a job. A change detector, not a
// cryptographic digest.
std::optional<Hashed> read_and_hash(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat before {};
  if (::fstat(fd, &before) != 0) {
    ::close(fd);
    return std::nullopt;
  }
  const std::int64_t size = before.st_size;
  const std::int64_t pieces = (size + kPieceBytes - 1) / kPieceBytes;
  std::vector<std::uint64_t> piece_hash(static_cast<std::size_t>(pieces));
  std::atomic<bool> failed{false};
  parallel_for(pieces, 1, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t p = first; p < last && !failed; ++p) {
      const std::int64_t end = std::min(size, (p + 1) * kPieceBytes);
      if (!hash_piece(fd, p * kPieceBytes, end, piece_hash[static_cast<std::size_t>(p)])) failed = true;
    }
  });
  std::uint64_t h = kFnvOffset;
  for (const std::uint64_t piece : piece_hash) h = (h ^ piece) * kFnvPrime;
  h = (h ^ static_cast<std::uint64_t>(size)) * kFnvPrime;
  struct stat after {};
  const bool bad = failed || ::fstat(fd, &after) != 0;
  ::close(fd);
  if (bad) return std::nullopt;
  return Hashed{fmt::format("{:016x}", h), identity(after)};
}

std::string absolute_path(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

// One file per input path, named by the path's FNV-1a: "PATH\nIDENTITY\nHASH\n".
std::string entry_path(const std::string& folder, const std::string& absolute) {
  std::uint64_t h = kFnvOffset;
  for (const unsigned char c : absolute) h = (h ^ c) * kFnvPrime;
  return (fs::path(folder) / fmt::format("{:016x}", h)).string();
}

std::optional<std::string> remembered(const std::string& folder, const std::string& absolute, const std::string& id) {
  std::ifstream in(entry_path(folder, absolute));
  std::string path, stored_id, hash;
  if (!std::getline(in, path) || !std::getline(in, stored_id) || !std::getline(in, hash)) return std::nullopt;
  if (path != absolute || stored_id != id || hash.size() != 16) return std::nullopt;
  return hash;
}

void remember(const std::string& folder, const std::string& absolute, const std::string& id, const std::string& hash) {
  std::error_code ec;
  fs::create_directories(folder, ec);
  const Status written = io::write_text_file(entry_path(folder, absolute), absolute + "\n" + id + "\n" + hash + "\n");
  if (!written.ok()) spdlog::debug("input hash not kept: {}", written.error().line());
}

bool settled(const struct stat& st) {
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now().time_since_epoch()).count();
  return ns_of(st.st_ctim) < now - kSettledNs;
}

struct State {
  std::mutex mutex;
  std::string folder;
  std::map<std::string, std::pair<std::string, std::string>> known;  // path -> (identity, hash)
};

State& state() {
  static State s;
  return s;
}

}  // namespace

void remember_hashes_in(const std::string& folder) {
  const std::lock_guard lock(state().mutex);
  state().folder = folder;
}

std::optional<std::string> file_content_hash(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  const std::string id = identity(st);
  State& s = state();
  const std::lock_guard lock(s.mutex);
  if (const auto at = s.known.find(path); at != s.known.end() && at->second.first == id) return at->second.second;
  const std::string absolute = absolute_path(path);
  if (!s.folder.empty()) {
    if (auto hash = remembered(s.folder, absolute, id)) {
      spdlog::debug("input {} unchanged since hashed: not read again", absolute);
      s.known[path] = {id, *hash};
      return hash;
    }
  }
  spdlog::debug("input {} hashed: reading {} bytes", absolute, st.st_size);
  const auto hashed = read_and_hash(path);
  if (!hashed) return std::nullopt;
  const bool steady = hashed->identity_after == id;
  if (steady) s.known[path] = {id, hashed->hash};
  if (steady && settled(st) && !s.folder.empty()) remember(s.folder, absolute, id, hashed->hash);
  return hashed->hash;
}

}  // namespace hb::jobs
