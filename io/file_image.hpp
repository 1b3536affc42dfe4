// Files read whole into a GPU's memory ahead of the step that reads them. In a job on
// GPUs, the next scene's data file is loaded while this scene's later steps compute;
// the MNF statistics pass then takes its tiles from the GPU's copy (Cube::
// rows_in_memory) and reads nothing from the host: the reads fall where the host's
// memory is otherwise idle, and each part crosses to the GPU from a small pinned buffer
// while it is still in the core's cache, one pass over the host's memory a byte instead
// of three (docs/PERFORMANCE.md, "Archive throughput"). A reader uses an image only
// while the file on disk is the one that was loaded (device, inode, size, modification
// and status-change times).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <span>
#include <string>

#include "src/base/error.hpp"

namespace hb::io {

// A file is read in pieces of kImagePieceBytes, each by one thread (pieces in parallel,
// at most kImageReaders threads), a piece in parts of kImagePartBytes, in order.
// `visit(piece, part)` sees each part just after its read, while it is still in the
// core's cache (the input hash, jobs/). An image takes the parts in stores of
// kImageStoreBytes, each a GPU copy of its own: with a copy a part (256 KiB), the KNN step
// beside a load ran 0.15-0.19 s longer a flightline at four GPUs, with 1 MiB 0.07-0.09 s
// (docs/PERFORMANCE.md, "Archive throughput"; two calls on 4x H200 hosts).
inline constexpr std::int64_t kImagePieceBytes = std::int64_t{64} << 20;
inline constexpr std::size_t kImagePartBytes = std::size_t{256} << 10;
inline constexpr std::size_t kImageStoreBytes = std::size_t{1} << 20;
inline constexpr int kImageReaders = 16;
using PartVisitor = std::function<void(std::int64_t piece, std::span<const std::byte> part)>;

// The file's identity on disk: what must stay the same for bytes read from it earlier
// to still be its bytes. Empty when the file cannot be stat'ed.
std::string file_identity(const std::string& path);

// Where a load puts the file: memory of `device()` (a GPU; -1 the host), into which each
// part is stored from the buffer it was read into. One load at a time uses a sink; its
// reader threads call store_buffer and store with their own number, below kImageReaders.
class ImageSink {
 public:
  virtual ~ImageSink() = default;
  virtual int device() const = 0;
  // Room for a file of `bytes`; its memory lives while the pointer does.
  virtual Result<std::shared_ptr<std::byte[]>> allocate(std::size_t bytes) = 0;
  // A buffer of kImageStoreBytes that reader `thread` may read its next store into.
  virtual Result<std::byte*> store_buffer(int thread) = 0;
  // Bytes [at, at + part.size()) of `image`, from the buffer store_buffer(thread) gave
  // (every store but a piece's last is kImageStoreBytes).
  virtual Status store(int thread, std::byte* image, std::int64_t at, std::span<const std::byte> part) = 0;
  // Returns once every part stored is in the image.
  virtual Status finish() = 0;
};

struct FileRead {
  std::int64_t size = 0;
  std::string identity_before;  // when the read began
  std::string identity_after;   // when it ended: another value means the file changed meanwhile
};
// Reads the whole file, each part visited, then stored into `image` through `sink`
// when both are given (room for the whole file). An io error naming the file when it
// cannot be read or ends early.
Result<FileRead> read_file_in_parts(const std::string& path, const PartVisitor& visit, ImageSink* sink = nullptr,
                                    std::byte* image = nullptr);

struct FileImage {
  std::shared_ptr<std::byte[]> bytes;  // in the memory of `device`
  std::int64_t size = 0;
  std::string identity;  // the file's, unchanged while it was read
  int device = -1;
};

// Starts loading `path` through `sink` on a thread of its own, `visit` seeing each part;
// readers that ask for the image meanwhile wait for it. Returns the load's outcome, for
// the caller to wait on. The sink must not be used by another load until this one ends.
std::shared_future<Status> load_file_image(const std::string& path, std::shared_ptr<ImageSink> sink,
                                           PartVisitor visit = {});
// The image of the file at `path` (after a load in progress ends) while the file is the
// one loaded; null when none was loaded, the load failed or the file has changed.
std::shared_ptr<const FileImage> file_image(const std::string& path);
// Forgets the image; its memory is freed when its last reader lets go.
void drop_file_image(const std::string& path);

}  // namespace hb::io
