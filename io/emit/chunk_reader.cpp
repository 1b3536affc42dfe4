#include "io/emit/chunk_reader.hpp"

#include <libdeflate.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "io/hdf5_access.hpp"
#include "io/hdf5_layout.hpp"
#include "src/base/byte_pool.hpp"
#include "src/base/parallel_for.hpp"

namespace hb::io::emit {
namespace {

using Bytes = std::vector<std::byte>;
using Offset = std::array<hsize_t, 3>;

// The filter pipeline as written: shuffle (optional) then deflate, each with its
// position, which the per-chunk filter mask refers to.
struct Layout {
  Offset chunk{};
  std::size_t element = 0;
  int shuffle = -1;  // pipeline position, -1 = absent
  int deflate = -1;

  std::size_t chunk_bytes() const { return chunk[0] * chunk[1] * chunk[2] * element; }
};

std::optional<Layout> supported_layout(hid_t dataset, DataType type) {
  h5::PropertyList dcpl(H5Dget_create_plist(dataset));
  if (!dcpl || H5Pget_layout(dcpl.get()) != H5D_CHUNKED) return std::nullopt;
  Layout layout;
  if (H5Pget_chunk(dcpl.get(), 3, layout.chunk.data()) != 3) return std::nullopt;
  const int filters = H5Pget_nfilters(dcpl.get());
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t values = 0;
    const H5Z_filter_t filter = H5Pget_filter2(dcpl.get(), static_cast<unsigned>(i), &flags, &values, nullptr, 0,
                                               nullptr, &config);
    if (filter == H5Z_FILTER_SHUFFLE && layout.deflate < 0 && layout.shuffle < 0) layout.shuffle = i;
    else if (filter == H5Z_FILTER_DEFLATE && layout.deflate < 0) layout.deflate = i;
    else return std::nullopt;  // fletcher32, szip, n-bit, ... or an order we do not undo
  }
  if (layout.deflate < 0) return std::nullopt;  // nothing to gain over the library
  h5::Datatype stored(H5Dget_type(dataset));
  if (!stored || H5Tequal(stored.get(), h5::memory_type(type)) <= 0) return std::nullopt;  // other byte order
  layout.element = bytes_per_sample(type);
  return layout;
}

// HDF5's shuffle: byte b of element i was stored at b * n + i; a tail that is not a
// whole element stays in place.
void unshuffle(const Bytes& in, Bytes& out, std::size_t element) {
  const std::size_t n = in.size() / element;
  if (element == 4 && std::endian::native == std::endian::little) {
    // float32 and int32, the common case: four byte planes into words (vectorises).
    const auto* plane = reinterpret_cast<const std::uint8_t*>(in.data());
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t word = std::uint32_t{plane[i]} | std::uint32_t{plane[n + i]} << 8 |
                                 std::uint32_t{plane[2 * n + i]} << 16 | std::uint32_t{plane[3 * n + i]} << 24;
      std::memcpy(out.data() + 4 * i, &word, 4);
    }
  } else {
    for (std::size_t i = 0; i < n; ++i)  // writes in order; reads `element` streams
      for (std::size_t b = 0; b < element; ++b) out[i * element + b] = in[b * n + i];
  }
  std::copy(in.begin() + static_cast<std::ptrdiff_t>(n * element), in.end(),
            out.begin() + static_cast<std::ptrdiff_t>(n * element));
}

// HDF5's deflate filter writes zlib streams. libdeflate inflates them about twice as
// fast as zlib; a decompressor per call, as they are not shared between threads.
bool inflate(const Bytes& stored, Bytes& out) {
  libdeflate_decompressor* d = libdeflate_alloc_decompressor();
  if (d == nullptr) return false;
  std::size_t size = 0;
  const auto result = libdeflate_zlib_decompress(d, stored.data(), stored.size(), out.data(), out.size(), &size);
  libdeflate_free_decompressor(d);
  return result == LIBDEFLATE_SUCCESS && size == out.size();
}

struct Chunk {
  Offset at{};
  Bytes stored;       // as in the file
  std::uint32_t mask = 0;  // bit i set: filter i was skipped for this chunk
  Bytes values;       // decoded, chunk_bytes()
  bool failed = false;
};

class ThreadedChunkCube final : public Cube {
 public:
  ThreadedChunkCube(std::string path, std::string name, CubeInfo info, h5::File file, h5::Dataset dataset,
                    Layout layout)
      : path_(std::move(path)), name_(std::move(name)), info_(std::move(info)), file_(std::move(file)),
        dataset_(std::move(dataset)), layout_(layout) {}

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
    auto chunks = stored_chunks(rows);
    if (!chunks) return library_read(rows, out);  // a chunk never written: the library fills it
    decode(*chunks);
    for (const auto& c : *chunks)
      if (c->failed) return bad_input(path_, name_, "a deflated chunk does not inflate (corrupt granule?)");
    parallel_for(static_cast<std::int64_t>(chunks->size()), 1, [&](std::int64_t begin, std::int64_t end) {
      for (auto i = begin; i < end; ++i) copy_rows(*(*chunks)[static_cast<std::size_t>(i)], rows, out);
    });
    keep_last_chunk_row(*chunks);
    return {};
  }

 private:
  using Shared = std::shared_ptr<Chunk>;

  // Every chunk the rows touch, read as stored (or taken decoded from the last call);
  // nullopt when one was never written.
  std::optional<std::vector<Shared>> stored_chunks(RowRange rows) const {
    std::vector<Shared> chunks;
    const auto& s = info_.shape;
    const auto& c = layout_.chunk;
    const auto first = static_cast<hsize_t>(rows.begin) / c[0] * c[0];
    for (hsize_t r = first; r < static_cast<hsize_t>(rows.end); r += c[0])
      for (hsize_t col = 0; col < static_cast<hsize_t>(s.samples); col += c[1])
        for (hsize_t band = 0; band < static_cast<hsize_t>(s.bands); band += c[2]) {
          const Offset at{r, col, band};
          if (const auto kept = kept_.find(at); kept != kept_.end()) {
            chunks.push_back(kept->second);
            continue;
          }
          hsize_t bytes = 0;
          if (H5Dget_chunk_storage_size(dataset_.get(), at.data(), &bytes) < 0 || bytes == 0) return std::nullopt;
          auto chunk = std::make_shared<Chunk>();
          chunk->at = at;
          chunk->stored = take(bytes);
          if (H5Dread_chunk(dataset_.get(), H5P_DEFAULT, at.data(), &chunk->mask, chunk->stored.data()) < 0)
            return std::nullopt;
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

  void decode_one(Chunk& c) const {
    if (!c.values.empty()) return;  // kept from the last call
    Bytes inflated;
    if (applied(c, layout_.deflate)) {
      inflated = take(layout_.chunk_bytes());
      if (!inflate(c.stored, inflated)) {
        c.failed = true;
        return;
      }
    } else {
      inflated = std::move(c.stored);
    }
    if (inflated.size() != layout_.chunk_bytes()) {
      c.failed = true;
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

  // Reads go by row ranges that need not end on a chunk boundary: the chunks of the
  // last chunk row are kept decoded for the next range, so each is inflated once.
  void keep_last_chunk_row(const std::vector<Shared>& chunks) const {
    kept_.clear();
    if (chunks.empty()) return;
    const hsize_t last = chunks.back()->at[0];
    for (const auto& c : chunks) {
      if (c->at[0] == last) {
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
  mutable std::mutex mutex_;
  mutable std::map<Offset, Shared> kept_;
  mutable BytePool pool_;
};

}  // namespace

std::unique_ptr<Cube> threaded_chunk_cube(const std::string& path, const std::string& name, const CubeInfo& info,
                                          h5::File& file, h5::Dataset& dataset) {
  const auto layout = supported_layout(dataset.get(), info.type);
  if (!layout) return nullptr;
  return std::make_unique<ThreadedChunkCube>(path, name, info, std::move(file), std::move(dataset), *layout);
}

}  // namespace hb::io::emit
