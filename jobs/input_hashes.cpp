#include "jobs/input_hashes.hpp"

#include <sys/stat.h>

#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "io/file_image.hpp"
#include "io/text_file.hpp"

namespace hb::jobs {
namespace fs = std::filesystem;
namespace {

constexpr std::uint64_t kFnvOffset = 14695981039346656037ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;
constexpr std::int64_t kSettledNs = 2'000'000'000;  // coarse file-system clocks tick in seconds

std::int64_t ns_of(const struct timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

struct Hashed {
  std::string hash;
  std::string identity_after;  // the file's identity once read: differs when it changed meanwhile
};

// The hash of a file read in io::read_file_in_parts's pieces (64 MiB, one thread each)
// and parts (256 KiB, small enough to stay in a core's L2 between the read and the hash:
// the hash then costs the host one pass over memory, the page cache, instead of three,
// while a GPU rank beside it reads the same scene). Each piece is hashed by FNV-1a over
// its 8-byte words (then its tail bytes), and the pieces' hashes are folded in order
// with the file's length: one core hashed about 3 GB/s, a third of a 5 GB flightline's
// time in a job, before the pieces ran in parallel. A change detector, not a
// cryptographic digest.
class PieceHashes {
 public:
  void visit(std::int64_t piece, std::span<const std::byte> part) {
    if (static_cast<std::size_t>(piece) >= hashes_.size()) return;
    std::uint64_t& h = hashes_[static_cast<std::size_t>(piece)];
    std::size_t i = 0;
    for (; i + 8 <= part.size(); i += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, part.data() + i, 8);
      h = (h ^ word) * kFnvPrime;
    }
    for (; i < part.size(); ++i) h = (h ^ static_cast<std::uint64_t>(part[i])) * kFnvPrime;
  }
  // Sized before the read, from the file's size then: a file that grows meanwhile is
  // refused by its changed identity.
  void expect(std::int64_t size) {
    hashes_.assign(static_cast<std::size_t>((size + io::kImagePieceBytes - 1) / io::kImagePieceBytes), kFnvOffset);
  }
  std::string folded(std::int64_t size) const {
    std::uint64_t h = kFnvOffset;
    for (const std::uint64_t piece : hashes_) h = (h ^ piece) * kFnvPrime;
    h = (h ^ static_cast<std::uint64_t>(size)) * kFnvPrime;
    return fmt::format("{:016x}", h);
  }

 private:
  std::vector<std::uint64_t> hashes_;
};

// Every part's size but the file's last is a multiple of 8: words never straddle parts.
static_assert(io::kImagePartBytes % 8 == 0 && io::kImagePieceBytes % io::kImagePartBytes == 0);

std::optional<Hashed> read_and_hash(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  PieceHashes hashes;
  hashes.expect(st.st_size);
  const auto read = io::read_file_in_parts(path, [&](std::int64_t p, auto part) { hashes.visit(p, part); });
  if (!read || read->size != static_cast<std::int64_t>(st.st_size)) return std::nullopt;
  return Hashed{hashes.folded(read->size), read->identity_after};
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

// A file loaded ahead with its hash taken from the load's own reads.
struct Loading {
  std::shared_future<Status> loaded;
  std::shared_ptr<PieceHashes> hashes;
};

struct State {
  std::mutex mutex;
  std::string folder;
  std::map<std::string, std::pair<std::string, std::string>> known;  // path -> (identity, hash)
  std::map<std::string, Loading> loading;  // absolute path -> its load
};

State& state() {
  static State s;
  return s;
}

// The hash of a file loaded ahead (load_and_hash), once its load is done, while the
// file is the one loaded; nullopt when none was loaded or it failed or changed. The
// caller holds the state's lock.
std::optional<Hashed> hash_of_load(State& s, const std::string& path, const std::string& absolute) {
  const auto at = s.loading.find(absolute);
  if (at == s.loading.end()) return std::nullopt;
  const Loading load = std::move(at->second);
  s.loading.erase(at);
  if (!load.loaded.get().ok()) return std::nullopt;
  const auto image = io::file_image(path);
  if (!image) return std::nullopt;
  spdlog::debug("input {} hashed as it was loaded ahead", absolute);
  return Hashed{load.hashes->folded(image->size), image->identity};
}

}  // namespace

void remember_hashes_in(const std::string& folder) {
  const std::lock_guard lock(state().mutex);
  state().folder = folder;
}

std::shared_future<Status> load_and_hash(const std::string& path, std::shared_ptr<io::ImageSink> sink) {
  const std::string absolute = absolute_path(path);
  State& s = state();
  const std::lock_guard lock(s.mutex);
  const std::string id = io::file_identity(path);
  const bool known = (s.known.count(path) != 0 && s.known[path].first == id) ||
                     (!s.folder.empty() && remembered(s.folder, absolute, id));
  if (known) return io::load_file_image(path, std::move(sink));
  auto hashes = std::make_shared<PieceHashes>();
  struct stat st {};
  hashes->expect(::stat(path.c_str(), &st) == 0 ? st.st_size : 0);
  auto loaded =
      io::load_file_image(path, std::move(sink), [hashes](std::int64_t p, auto part) { hashes->visit(p, part); });
  s.loading[absolute] = {loaded, hashes};
  return loaded;
}

std::optional<std::string> file_content_hash(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  const std::string id = io::file_identity(path);
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
  auto hashed = hash_of_load(s, path, absolute);
  if (!hashed) {
    spdlog::debug("input {} hashed: reading {} bytes", absolute, st.st_size);
    hashed = read_and_hash(path);
  }
  if (!hashed) return std::nullopt;
  const bool steady = hashed->identity_after == id;
  if (steady) s.known[path] = {id, hashed->hash};
  if (steady && settled(st) && !s.folder.empty()) remember(s.folder, absolute, id, hashed->hash);
  return hashed->hash;
}

}  // namespace hb::jobs
