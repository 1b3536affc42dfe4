#include "io/emit/chunk_reader.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "io/emit/chunk_filters.hpp"
#include "io/hdf5_access.hpp"
#include "io/hdf5_layout.hpp"
#include "io/posix_file.hpp"
#include "src/base/byte_pool.hpp"
#include "src/base/parallel_for.hpp"

namespace hb::io::emit {
namespace {

constexpr std::size_t kAheadBytes = std::size_t{512} << 20;  // decoded chunks held ahead of the reads

struct Chunk {
  Offset at{};
  std::int64_t address = 0;  // in the file
  hsize_t bytes = 0;         // as stored
  unsigned mask = 0;         // bit i set: filter i was skipped for this chunk
  Bytes stored;              // as in the file
  Bytes values;              // decoded, chunk_bytes()
  std::optional<Error> error;
};

class ThreadedChunkCube final : public Cube {
 public:
  ThreadedChunkCube(std::string path, std::string name, CubeInfo info, h5::File file, h5::Dataset dataset,
                    Layout layout, PosixFile raw, std::int64_t base)
      : path_(std::move(path)), name_(std::move(name)), info_(std::move(info)), file_(std::move(file)),
        dataset_(std::move(dataset)), layout_(layout), raw_(std::move(raw)), base_(base) {}

  const CubeInfo& info() const override { return info_; }
  const std::string& path() const override { return path_; }
  CubeFormat format() const override { return CubeFormat::hdf5; }
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
    if (ahead_.valid()) ahead_.get();  // the chunks decoded in the background are ready
    const bool sequential = rows.begin == next_row_;
    auto chunks = stored_chunks(rows, round_up(static_cast<hsize_t>(rows.end)));
    if (!chunks) return library_read(rows, out);  // a chunk never written: the library fills it
    decode(*chunks);
    const auto needed = std::partition_point(chunks->begin(), chunks->end(), [&](const Shared& c) {
      return c->at[0] < static_cast<hsize_t>(rows.end);
    }) - chunks->begin();
    for (std::int64_t i = 0; i < needed; ++i)  // one decoded ahead fails when it is needed
      if (const auto& error = (*chunks)[static_cast<std::size_t>(i)]->error) return *error;
    parallel_for(needed, 1, [&](std::int64_t begin, std::int64_t end) {
      for (auto i = begin; i < end; ++i) copy_rows(*(*chunks)[static_cast<std::size_t>(i)], rows, out);
    });
    keep_beyond(*chunks, rows.end, sequential);
    next_row_ = rows.end;
    if (sequential) decode_ahead(rows);
    return {};
  }

 private:
  using Shared = std::shared_ptr<Chunk>;

  // Ingest reads 64 MiB a step: 7 EMIT chunks, 7 busy cores, and then writes them. After
  // a range that followed the last one, when less than half a window is decoded ahead,
  // the next window is located here and decoded in the background while the caller uses
  // the rows; the next range waits for it. A window holds a chunk for every core (at most
  // kAheadBytes) and at least the rows of a range.
  void decode_ahead(RowRange rows) const {
    const auto end = static_cast<hsize_t>(rows.end);
    const auto& c = layout_.chunk;
    const hsize_t per_row = round_up_div(info_.shape.samples, c[1]) * round_up_div(info_.shape.bands, c[2]);
    const hsize_t chunks = std::min<hsize_t>(host_threads(), std::max<hsize_t>(1, kAheadBytes / layout_.chunk_bytes()));
    const hsize_t window = std::max(round_up_div(static_cast<std::int64_t>(chunks), per_row) * c[0],
                                    round_up(static_cast<hsize_t>(rows.rows())) + c[0]);
    const hsize_t from = kept_.empty() ? round_up(end) : kept_.rbegin()->first[0] + c[0];
    const hsize_t lines = round_up(static_cast<hsize_t>(info_.shape.lines));
    if (from >= lines || from >= round_up(end) + window / 2) return;  // enough ahead
    const auto first = static_cast<std::int64_t>(from);
    auto located = stored_chunks(RowRange{first, first + 1}, std::min(from + window, lines));
    if (!located) return;  // a chunk never written: the range that needs it goes to the library
    for (const auto& chunk : *located) kept_[chunk->at] = chunk;
    ahead_ = std::async(std::launch::async, [this, list = std::move(*located)]() mutable { decode(list); });
  }
  hsize_t round_up(hsize_t row) const { return (row + layout_.chunk[0] - 1) / layout_.chunk[0] * layout_.chunk[0]; }
  static hsize_t round_up_div(std::int64_t n, hsize_t d) { return (static_cast<hsize_t>(n) + d - 1) / d; }

  // Every chunk of the rows from `rows` to `end`, located in the file (or taken decoded
  // from the last call); nullopt when one the rows touch was never written.
  std::optional<std::vector<Shared>> stored_chunks(RowRange rows, hsize_t end) const {
    std::vector<Shared> chunks;
    const auto& s = info_.shape;
    const auto& c = layout_.chunk;
    const auto first = static_cast<hsize_t>(rows.begin) / c[0] * c[0];
    for (hsize_t r = first; r < end; r += c[0])
      for (hsize_t col = 0; col < static_cast<hsize_t>(s.samples); col += c[1])
        for (hsize_t band = 0; band < static_cast<hsize_t>(s.bands); band += c[2]) {
          const Offset at{r, col, band};
          if (const auto kept = kept_.find(at); kept != kept_.end()) {
            chunks.push_back(kept->second);
            continue;
          }
          auto chunk = std::make_shared<Chunk>();
          chunk->at = at;
          haddr_t address = HADDR_UNDEF;
          if (H5Dget_chunk_info_by_coord(dataset_.get(), at.data(), &chunk->mask, &address, &chunk->bytes) < 0 ||
              address == HADDR_UNDEF || chunk->bytes == 0) {
            if (r < static_cast<hsize_t>(rows.end)) return std::nullopt;
            return chunks;  // decoding ahead stops at a chunk never written
          }
          chunk->address = base_ + static_cast<std::int64_t>(address);
          chunks.push_back(std::move(chunk));
        }
    return chunks;
  }

  bool applied(const Chunk& c, int filter) const { return filter >= 0 && (c.mask & (1u << filter)) == 0; }

  void decode(std::vector<Shared>& chunks) const {
    parallel_for(static_cast<std::int64_t>(chunks.size()), 1, [&](std::int64_t begin, std::int64_t end) {
      for (auto i = begin; i < end; ++i) decode_one(*chunks[static_cast<std::size_t>(i)]);
    });
  }

  // Read (pread on this thread: the raw reads spread over the cores as the inflation
  // does) and decoded.
  void decode_one(Chunk& c) const {
    if (!c.values.empty()) return;  // kept from the last call
    c.stored = take(c.bytes);
    if (const Status read = raw_.read_at(c.address, c.stored); !read) {
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
    if (applied(c, layout_.shuffle)) {
      c.values = take(inflated.size());
      unshuffle(inflated, c.values, layout_.element);
      give(std::move(inflated));
    } else {
      c.values = std::move(inflated);
    }
    give(std::move(c.stored));
  }

  // Chunk-sized buffers, reused between reads.
  Bytes take(std::size_t bytes) const { return pool_.take(bytes); }
  void give(Bytes buffer) const { pool_.give(std::move(buffer)); }

  // The part of `c` inside `rows` into `out` (rows x samples x bands).
  void copy_rows(const Chunk& c, RowRange rows, std::span<std::byte> out) const {
    const auto& s = info_.shape;
    const auto& dim = layout_.chunk;
    const std::size_t e = layout_.element;
    const auto row_begin = std::max<std::int64_t>(rows.begin, static_cast<std::int64_t>(c.at[0]));
    const auto row_end = std::min<std::int64_t>(rows.end, static_cast<std::int64_t>(c.at[0] + dim[0]));
    const auto cols = std::min<hsize_t>(dim[1], static_cast<hsize_t>(s.samples) - c.at[1]);
    const auto bands = std::min<hsize_t>(dim[2], static_cast<hsize_t>(s.bands) - c.at[2]);
    for (std::int64_t row = row_begin; row < row_end; ++row)
      for (hsize_t col = 0; col < cols; ++col) {
        const std::size_t from = (((static_cast<hsize_t>(row) - c.at[0]) * dim[1] + col) * dim[2]) * e;
        const std::size_t to =
            ((static_cast<std::size_t>(row - rows.begin) * static_cast<std::size_t>(s.samples) + c.at[1] + col) *
                 static_cast<std::size_t>(s.bands) + c.at[2]) * e;
        std::memcpy(out.data() + to, c.values.data() + from, bands * e);
      }
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

  Status library_read(RowRange rows, std::span<std::byte> out) const {
    const auto selection = h5::select_rows(dataset_.get(), rows, info_.shape);
    if (H5Dread(dataset_.get(), h5::memory_type(info_.type), selection.memory.get(), selection.file.get(), H5P_DEFAULT,
                out.data()) < 0)
      return Error{ErrorKind::io, path_, name_, "cannot read rows: " + h5::hdf5_error_detail()};
    return {};
  }

  std::string path_;
  std::string name_;
  CubeInfo info_;
  h5::File file_;
  h5::Dataset dataset_;
  Layout layout_;
  PosixFile raw_;      // the same file, for the chunks' bytes
  std::int64_t base_;  // where HDF5's addresses start (after a user block)
  mutable std::mutex mutex_;
  mutable std::map<Offset, Shared> kept_;
  mutable std::int64_t next_row_ = 0;  // where the last range ended
  mutable BytePool pool_;
  mutable std::future<void> ahead_;  // last: waited for before anything it uses goes
};

}  // namespace

std::unique_ptr<Cube> threaded_chunk_cube(const std::string& path, const std::string& name, const CubeInfo& info,
                                          h5::File& file, h5::Dataset& dataset) {
  const auto layout = supported_layout(dataset.get(), info.type);
  if (!layout) return nullptr;
  h5::PropertyList fcpl(H5Fget_create_plist(file.get()));
  hsize_t user_block = 0;
  auto raw = PosixFile::open_read(path);
  if (!fcpl || H5Pget_userblock(fcpl.get(), &user_block) < 0 || !raw) return nullptr;
  return std::make_unique<ThreadedChunkCube>(path, name, info, std::move(file), std::move(dataset), *layout,
                                             std::move(*raw), static_cast<std::int64_t>(user_block));
}

}  // namespace hb::io::emit
