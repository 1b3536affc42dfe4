#include "io/emit/chunk_reader.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "io/emit/chunk_filters.hpp"
#include "io/hdf5_access.hpp"
#include "io/hdf5_layout.hpp"
#include "io/posix_file.hpp"
#include "src/base/byte_pool.hpp"
#include "src/base/parallel_for.hpp"
#include "src/base/stopwatch.hpp"

namespace hb::io::emit {
namespace {

constexpr std::size_t kAheadBytes = std::size_t{512} << 20;  // decoded chunks held ahead of the reads

// Where a chunk is stored, found through HDF5 when the granule opens.
struct Stored {
  std::int64_t address = 0;  // in the file
  hsize_t bytes = 0;         // as stored
  unsigned mask = 0;         // bit i set: filter i was skipped for this chunk
};

// Chunks numbered row-major over the chunk grid.
std::size_t chunk_index_of(const Offset& at, const CubeShape& shape, const Offset& chunk) {
  const auto per_line = (static_cast<hsize_t>(shape.samples) + chunk[1] - 1) / chunk[1];
  const auto per_sample = (static_cast<hsize_t>(shape.bands) + chunk[2] - 1) / chunk[2];
  return static_cast<std::size_t>(((at[0] / chunk[0]) * per_line + at[1] / chunk[1]) * per_sample + at[2] / chunk[2]);
}

// Where every chunk is stored (HDF5 is asked here, once, so that reads never call it
// and may run beside another thread's HDF5 writes); nullopt when one was never written.
std::optional<std::vector<Stored>> locate_every_chunk(hid_t dataset, const CubeShape& shape, const Layout& layout) {
  const auto& c = layout.chunk;
  std::vector<Stored> stored;
  for (hsize_t r = 0; r < static_cast<hsize_t>(shape.lines); r += c[0])
    for (hsize_t col = 0; col < static_cast<hsize_t>(shape.samples); col += c[1])
      for (hsize_t band = 0; band < static_cast<hsize_t>(shape.bands); band += c[2]) {
        const Offset at{r, col, band};
        Stored s;
        haddr_t address = HADDR_UNDEF;
        if (H5Dget_chunk_info_by_coord(dataset, at.data(), &s.mask, &address, &s.bytes) < 0 ||
            address == HADDR_UNDEF || s.bytes == 0)
          return std::nullopt;
        s.address = static_cast<std::int64_t>(address);
        stored.push_back(s);
      }
  return stored;
}

struct Chunk {
  Offset at{};
  Stored where;
  Bytes stored;              // as in the file
  Bytes values;              // decoded, chunk_bytes()
  bool shuffled = false;     // values still in HDF5's shuffled order: copy_rows undoes it
  std::optional<Error> error;
  // located -> claimed (by the one thread that decodes it) -> decoded (values or error set).
  enum State { located, claimed, decoded };
  std::atomic<int> state{located};
};

class ThreadedChunkCube final : public Cube {
 public:
  ThreadedChunkCube(std::string path, std::string name, CubeInfo info, Layout layout, std::vector<Stored> stored,
                    PosixFile raw)
      : path_(std::move(path)), name_(std::move(name)), info_(std::move(info)), layout_(layout),
        stored_(std::move(stored)), raw_(std::move(raw)) {}
  ~ThreadedChunkCube() override {
    for (auto& batch : ahead_) batch.wait();
    spdlog::debug("{}: reads waited {:.3f} s for chunks decoded ahead, located chunks {:.3f} s, decoded {:.3f} s "
                  "themselves, copied rows {:.3f} s", path_, seconds_.waiting, seconds_.locating, seconds_.decoding,
                  seconds_.copying);
  }

  const CubeInfo& info() const override { return info_; }
  const std::string& path() const override { return path_; }
  CubeFormat format() const override { return CubeFormat::hdf5; }
  bool reads_through_hdf5() const override { return false; }  // HDF5 located every chunk at open
  std::int64_t bytes_on_disk() const override {
    std::error_code error;
    const auto size = std::filesystem::file_size(path_, error);
    return error ? 0 : static_cast<std::int64_t>(size);
  }

  Status read_rows(RowRange rows, std::span<std::byte> out) const override {
    const std::int64_t row_count = rows.empty() ? 0 : rows.rows();
    if (!rows.empty() && (rows.begin < 0 || rows.end > info_.shape.lines))
      return Error{ErrorKind::internal, path_, name_, "row range out of the scene"};
    if (static_cast<std::int64_t>(out.size()) != row_count * info_.bytes_per_row())
      return Error{ErrorKind::internal, path_, name_, "output buffer size does not match the rows"};
    if (rows.empty()) return {};
    const std::lock_guard lock(mutex_);
    Stopwatch clock;
    const bool sequential = rows.begin == next_row_;
    auto chunks = chunks_of(rows.begin, round_up(static_cast<hsize_t>(rows.end)));
    if (sequential) decode_ahead(rows);  // the next window, beside this range's own chunks
    seconds_.locating += clock.lap();
    decode(chunks);
    seconds_.decoding += clock.lap();
    wait_decoded(chunks);  // those decoding ahead
    seconds_.waiting += clock.lap();
    for (const auto& c : chunks)  // one decoded ahead fails when it is needed
      if (c->error) return *c->error;
    copy_rows(chunks, rows, out);
    keep_beyond(chunks, rows.end, sequential);
    seconds_.copying += clock.lap();
    next_row_ = rows.end;
    return {};
  }

 private:
  using Shared = std::shared_ptr<Chunk>;

  // Ingest reads 64 MiB a step, 7 EMIT chunks: too few to keep every core busy. After
  // a range that followed the last one, when less than half a window is decoded ahead,
  // the next window is located here and decoded in the background while the caller uses
  // the rows; a range waits only for the chunks it needs. A window holds a chunk for
  // every core (at most kAheadBytes) and at least the rows of a range.
  void decode_ahead(RowRange rows) const {
    const auto end = static_cast<hsize_t>(rows.end);
    const auto& c = layout_.chunk;
    const hsize_t per_row = round_up_div(info_.shape.samples, c[1]) * round_up_div(info_.shape.bands, c[2]);
    const hsize_t chunks = std::min<hsize_t>(host_threads(), std::max<hsize_t>(1, kAheadBytes / layout_.chunk_bytes()));
    const hsize_t window = std::max(round_up_div(static_cast<std::int64_t>(chunks), per_row) * c[0],
                                    round_up(static_cast<hsize_t>(rows.rows())) + c[0]);
    const hsize_t from = std::max(round_up(end), kept_.empty() ? 0 : kept_.rbegin()->first[0] + c[0]);
    const hsize_t lines = round_up(static_cast<hsize_t>(info_.shape.lines));
    if (from >= lines || from >= round_up(end) + window / 2) return;  // enough ahead
    auto located = chunks_of(static_cast<std::int64_t>(from), std::min(from + window, lines));
    for (const auto& chunk : located) kept_[chunk->at] = chunk;
    std::erase_if(ahead_, [](const auto& batch) {
      return batch.wait_for(std::chrono::seconds{}) == std::future_status::ready;  // those done
    });
    ahead_.push_back(std::async(std::launch::async, [this, list = std::move(located)] { decode(list); }));
  }
  std::size_t chunk_index(const Offset& at) const { return chunk_index_of(at, info_.shape, layout_.chunk); }
  hsize_t round_up(hsize_t row) const { return (row + layout_.chunk[0] - 1) / layout_.chunk[0] * layout_.chunk[0]; }
  static hsize_t round_up_div(std::int64_t n, hsize_t d) { return (static_cast<hsize_t>(n) + d - 1) / d; }

  // Every chunk of the chunk rows from the one holding row `begin` to `end`: those kept,
  // and new ones where they are stored.
  std::vector<Shared> chunks_of(std::int64_t begin, hsize_t end) const {
    std::vector<Shared> chunks;
    const auto& s = info_.shape;
    const auto& c = layout_.chunk;
    for (hsize_t r = static_cast<hsize_t>(begin) / c[0] * c[0]; r < end; r += c[0])
      for (hsize_t col = 0; col < static_cast<hsize_t>(s.samples); col += c[1])
        for (hsize_t band = 0; band < static_cast<hsize_t>(s.bands); band += c[2]) {
          const Offset at{r, col, band};
          if (const auto kept = kept_.find(at); kept != kept_.end()) {
            chunks.push_back(kept->second);
            continue;
          }
          auto chunk = std::make_shared<Chunk>();
          chunk->at = at;
          chunk->where = stored_[chunk_index(at)];
          chunks.push_back(std::move(chunk));
        }
    return chunks;
  }

  bool applied(const Chunk& c, int filter) const { return filter >= 0 && (c.where.mask & (1u << filter)) == 0; }

  // The chunks no thread has claimed, on the host threads: none are started for a range
  // whose chunks were all decoded ahead.
  void decode(const std::vector<Shared>& chunks) const {
    std::vector<Chunk*> unclaimed;
    for (const auto& c : chunks)
      if (c->state == Chunk::located) unclaimed.push_back(c.get());
    parallel_for(static_cast<std::int64_t>(unclaimed.size()), 1, [&](std::int64_t begin, std::int64_t end) {
      for (auto i = begin; i < end; ++i) decode_one(*unclaimed[static_cast<std::size_t>(i)]);
    });
  }

  // Each chunk decoded by the thread that claims it first.
  void decode_one(Chunk& c) const {
    int expected = Chunk::located;
    if (!c.state.compare_exchange_strong(expected, Chunk::claimed)) return;  // decoded or decoding
    read_and_decode(c);
    {
      const std::lock_guard lock(decoded_mutex_);
      c.state = Chunk::decoded;
    }
    decoded_.notify_all();
  }

  void wait_decoded(std::span<const Shared> chunks) const {
    std::unique_lock lock(decoded_mutex_);
    decoded_.wait(lock, [&] {
      return std::all_of(chunks.begin(), chunks.end(), [](const Shared& c) { return c->state == Chunk::decoded; });
    });
  }

  // Read (pread on this thread: the raw reads spread over the cores as the inflation
  // does) and decoded.
  void read_and_decode(Chunk& c) const {
    c.stored = take(c.where.bytes);
    if (const Status read = raw_.read_at(c.where.address, c.stored); !read) {
      c.error = read.error();
      return;
    }
    Bytes inflated;
    if (applied(c, layout_.deflate)) {
      inflated = take(layout_.chunk_bytes());
      if (!inflate(c.stored, inflated)) inflated.clear();
    } else {
      inflated = std::move(c.stored);
    }
    if (inflated.size() != layout_.chunk_bytes()) {
      c.error = bad_input(path_, name_, "a deflated chunk does not inflate (corrupt granule?)");
      return;
    }
    // The shuffle is undone as the rows are copied out: a pass over memory saved.
    c.shuffled = applied(c, layout_.shuffle);
    c.values = std::move(inflated);
    give(std::move(c.stored));
  }

  // Chunk-sized buffers, reused between reads.
  Bytes take(std::size_t bytes) const { return pool_.take(bytes); }
  void give(Bytes buffer) const { pool_.give(std::move(buffer)); }

  // The chunks' parts inside `rows` into `out` (rows x samples x bands), a chunk row per
  // item: the few chunks of a range would leave most cores idle.
  void copy_rows(const std::vector<Shared>& chunks, RowRange rows, std::span<std::byte> out) const {
    const auto& s = info_.shape;
    const auto& dim = layout_.chunk;
    const std::size_t e = layout_.element;
    const std::size_t elements = layout_.chunk_bytes() / e;
    const auto per_chunk = static_cast<std::int64_t>(dim[0]);
    parallel_for(static_cast<std::int64_t>(chunks.size()) * per_chunk, 8, [&](std::int64_t begin, std::int64_t end) {
      for (auto item = begin; item < end; ++item) {
        const Chunk& c = *chunks[static_cast<std::size_t>(item / per_chunk)];
        const auto row = static_cast<std::int64_t>(c.at[0]) + item % per_chunk;
        if (row < rows.begin || row >= rows.end) continue;
        const auto cols = std::min<hsize_t>(dim[1], static_cast<hsize_t>(s.samples) - c.at[1]);
        const auto bands = std::min<hsize_t>(dim[2], static_cast<hsize_t>(s.bands) - c.at[2]);
        for (hsize_t col = 0; col < cols; ++col) {
          const std::size_t from = (((static_cast<hsize_t>(row) - c.at[0]) * dim[1] + col) * dim[2]) * e;
          const std::size_t to =
              ((static_cast<std::size_t>(row - rows.begin) * static_cast<std::size_t>(s.samples) + c.at[1] + col) *
                   static_cast<std::size_t>(s.bands) + c.at[2]) * e;
          if (c.shuffled) unshuffle_into(c.values.data(), elements, from / e, bands, e, out.data() + to);
          else std::memcpy(out.data() + to, c.values.data() + from, bands * e);
        }
      }
    });
  }

  // Row ranges need not end on a chunk boundary: the chunks reaching past `end` (the
  // last one the range touched and those decoded ahead, in this call or before) are
  // kept decoded for the next range, so each is inflated once.
  void keep_beyond(const std::vector<Shared>& chunks, std::int64_t end, bool sequential) const {
    const auto beyond = [&](const Chunk& c) { return c.at[0] + layout_.chunk[0] > static_cast<hsize_t>(end); };
    if (!sequential) kept_.clear();
    std::erase_if(kept_, [&](const auto& entry) { return !beyond(*entry.second); });  // those were in `chunks`
    for (const auto& c : chunks) {
      if (beyond(*c) && !c->error) {
        kept_[c->at] = c;
        continue;
      }
      give(std::move(c->values));
      give(std::move(c->stored));
    }
  }

  std::string path_;
  std::string name_;
  CubeInfo info_;
  Layout layout_;
  std::vector<Stored> stored_;  // every chunk, by chunk_index()
  PosixFile raw_;               // the same file, for the chunks' bytes
  mutable std::mutex mutex_;
  mutable std::map<Offset, Shared> kept_;
  mutable std::int64_t next_row_ = 0;  // where the last range ended
  mutable struct {
    double waiting = 0, locating = 0, decoding = 0, copying = 0;
  } seconds_;  // for the -v log
  mutable BytePool pool_;
  mutable std::mutex decoded_mutex_;
  mutable std::condition_variable decoded_;
  mutable std::vector<std::future<void>> ahead_;  // last: waited for before anything they use goes
};

}  // namespace

std::unique_ptr<Cube> threaded_chunk_cube(const std::string& path, const std::string& name, const CubeInfo& info,
                                          h5::File& file, h5::Dataset& dataset) {
  const auto layout = supported_layout(dataset.get(), info.type);
  if (!layout) return nullptr;
  // Chunk addresses count from a user block's end in some HDF5 versions and from the
  // file's start in others (HDF5 pull request 4236): a file with one keeps the library.
  h5::PropertyList fcpl(H5Fget_create_plist(file.get()));
  hsize_t user_block = 0;
  if (!fcpl || H5Pget_userblock(fcpl.get(), &user_block) < 0 || user_block != 0) return nullptr;
  auto raw = PosixFile::open_read(path);
  if (!raw) return nullptr;
  auto stored = locate_every_chunk(dataset.get(), info.shape, *layout);
  if (!stored) return nullptr;  // a chunk never written: the library's reads fill it
  return std::make_unique<ThreadedChunkCube>(path, name, info, *layout, std::move(*stored), std::move(*raw));
}

}  // namespace hb::io::emit
