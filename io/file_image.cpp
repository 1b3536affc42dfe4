#include "io/file_image.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "src/base/parallel_for.hpp"
#include "src/base/stopwatch.hpp"

namespace hb::io {
namespace {

std::int64_t ns_of(const struct timespec& t) { return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

std::string identity_of(const struct stat& st) {
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_size) + ":" +
         std::to_string(ns_of(st.st_mtim)) + ":" + std::to_string(ns_of(st.st_ctim));
}

std::string read_error(std::int64_t at) {
  return errno != 0 ? std::string("read failed: ") + std::strerror(errno)
                    : "unexpected end of file at byte " + std::to_string(at) + " (was the file truncated while read?)";
}

static_assert(kImagePieceBytes % kImageStoreBytes == 0 && kImageStoreBytes % kImagePartBytes == 0);

// Reads `size` bytes at `at` into `into`.
Status read_exactly(int fd, const std::string& path, std::int64_t at, std::size_t size, std::byte* into) {
  for (std::size_t done = 0; done < size;) {
    errno = 0;
    const auto from = at + static_cast<std::int64_t>(done);
    const ssize_t got = ::pread(fd, into + done, size - done, static_cast<off_t>(from));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return io_error(path, read_error(from));
    done += static_cast<std::size_t>(got);
  }
  return {};
}

// Bytes [begin, end) of the file in stores of up to kImageStoreBytes (into the sink's
// buffer for reader `thread`, or a buffer of that size), each read part by part, every
// part visited just after its read, then stored whole.
Status read_piece(int fd, const std::string& path, std::int64_t piece, std::int64_t end, const PartVisitor& visit,
                  ImageSink* sink, std::byte* image, int thread) {
  std::vector<std::byte> buffer(sink == nullptr ? kImageStoreBytes : 0);
  for (std::int64_t at = piece * kImagePieceBytes; at < end;) {
    const auto stored = static_cast<std::size_t>(std::min<std::int64_t>(end - at, kImageStoreBytes));
    std::byte* into = buffer.data();
    if (sink != nullptr) {
      auto given = sink->store_buffer(thread);
      if (!given) return given.error();
      into = *given;
    }
    for (std::size_t done = 0; done < stored; done += kImagePartBytes) {
      const std::size_t size = std::min(kImagePartBytes, stored - done);
      HB_TRY(read_exactly(fd, path, at + static_cast<std::int64_t>(done), size, into + done));
      if (visit) visit(piece, {into + done, size});
    }
    if (sink != nullptr) HB_TRY(sink->store(thread, image, at, {into, stored}));
    at += static_cast<std::int64_t>(stored);
  }
  return {};
}

struct Loaded {
  std::shared_future<Status> outcome;
  std::shared_ptr<FileImage> image;  // set by the load before `outcome` is ready
};

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<Loaded>> by_path;
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string key_of(const std::string& path) {
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute.lexically_normal().string();
}

}  // namespace

std::string file_identity(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? identity_of(st) : std::string();
}

// The pieces go to threads of their own, not to the worker pool: a load runs beside a
// step, whose tile reads would otherwise queue behind its pieces.
Result<FileRead> read_file_in_parts(const std::string& path, const PartVisitor& visit, ImageSink* sink,
                                    std::byte* image) {
  if (image == nullptr) sink = nullptr;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return io_error(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat before {};
  if (::fstat(fd, &before) != 0) {
    ::close(fd);
    return io_error(path, "cannot stat");
  }
  FileRead read{static_cast<std::int64_t>(before.st_size), identity_of(before), {}};
  const std::int64_t pieces = (read.size + kImagePieceBytes - 1) / kImagePieceBytes;
  const auto threads = static_cast<int>(std::clamp<std::int64_t>(pieces, 1, std::min(kImageReaders, host_threads())));
  std::atomic<std::int64_t> next{0};
  std::vector<Status> outcome(static_cast<std::size_t>(threads));
  {
    std::vector<std::jthread> readers;
    for (int t = 0; t < threads; ++t)
      readers.emplace_back([&, t] {
        // A load runs beside a step: its readers leave the cores to the step's threads.
        if (sink != nullptr) (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), 10);
        for (std::int64_t p = next++; p < pieces && outcome[static_cast<std::size_t>(t)].ok(); p = next++)
          outcome[static_cast<std::size_t>(t)] =
              read_piece(fd, path, p, std::min(read.size, (p + 1) * kImagePieceBytes), visit, sink, image, t);
      });
  }
  if (sink != nullptr) outcome.push_back(sink->finish());
  struct stat after {};
  const bool stat_after = ::fstat(fd, &after) == 0;
  ::close(fd);
  for (const Status& s : outcome)
    if (!s) return s.error();
  if (!stat_after) return io_error(path, "cannot stat");
  read.identity_after = identity_of(after);
  return read;
}

std::shared_future<Status> load_file_image(const std::string& path, std::shared_ptr<ImageSink> sink,
                                           PartVisitor visit) {
  auto loaded = std::make_shared<Loaded>();
  // The load holds its entry weakly: the future's state keeps the function, and a strong
  // reference there would keep the entry, and its image, for ever.
  std::weak_ptr<Loaded> entry = loaded;
  loaded->outcome = std::async(std::launch::async, [path, sink = std::move(sink), visit = std::move(visit),
                                                    entry]() -> Status {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return io_error(path, "cannot stat");
    const auto size = static_cast<std::size_t>(st.st_size);
    const Stopwatch clock;
    auto bytes = sink->allocate(std::max<std::size_t>(size, 1));
    if (!bytes) return bytes.error();
    const double allocating = clock.seconds();
    auto read = read_file_in_parts(path, visit, sink.get(), bytes->get());
    spdlog::debug("{} loaded ahead: {:.2f} GB in {:.3f} s, {:.3f} s of it allocating", path,
                  static_cast<double>(size) / 1e9, clock.seconds(), allocating);
    if (!read) return read.error();
    if (read->identity_before != read->identity_after || read->size != static_cast<std::int64_t>(size))
      return io_error(path, "changed while it was loaded");
    if (auto held = entry.lock())
      held->image = std::make_shared<FileImage>(
          FileImage{std::move(*bytes), read->size, read->identity_after, sink->device()});
    return {};
  }).share();
  const std::lock_guard lock(registry().mutex);
  registry().by_path[key_of(path)] = loaded;
  return loaded->outcome;
}

std::shared_ptr<const FileImage> file_image(const std::string& path) {
  std::shared_ptr<Loaded> loaded;
  {
    const std::lock_guard lock(registry().mutex);
    const auto found = registry().by_path.find(key_of(path));
    if (found == registry().by_path.end()) return nullptr;
    loaded = found->second;
  }
  const Stopwatch waiting;
  const Status& outcome = loaded->outcome.get();
  if (waiting.seconds() > 1e-3) spdlog::debug("waited {:.3f} s for {} to be loaded", waiting.seconds(), path);
  if (!outcome) spdlog::debug("{} is read, not taken from its load ahead: {}", path, outcome.error().line());
  if (!outcome.ok() || loaded->image == nullptr) return nullptr;
  if (file_identity(path) != loaded->image->identity) return nullptr;
  return loaded->image;
}

void drop_file_image(const std::string& path) {
  std::shared_ptr<Loaded> loaded;
  {
    const std::lock_guard lock(registry().mutex);
    const auto found = registry().by_path.find(key_of(path));
    if (found == registry().by_path.end()) return;
    loaded = std::move(found->second);
    registry().by_path.erase(found);
  }
  loaded->outcome.wait();  // the load's thread is done with it before it goes
}

}  // namespace hb::io
