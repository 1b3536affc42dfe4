// The seam between file formats and algorithms: random access to row ranges of a
// scene (ENVI of any interleave, or HDF5) and a writer that leaves no partial file.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "src/base/error.hpp"
#include "io/metadata.hpp"
#include "io/tile.hpp"

namespace hb::mpi {
class Comm;
}

namespace hb::io {

enum class CubeFormat { envi, hdf5, gtiff };

// Decides by name: .h5/.hdf5/.he5/.nc are HDF5, .tif/.tiff Cloud-Optimized GeoTIFF
// (written only, io/gtiff/gtiff_writer.hpp), everything else ENVI.
CubeFormat format_from_path(const std::string& path);

class Cube {
 public:
  virtual ~Cube() = default;
  virtual const CubeInfo& info() const = 0;
  virtual const std::string& path() const = 0;
  virtual CubeFormat format() const = 0;
  virtual std::int64_t bytes_on_disk() const = 0;

  // Reads rows [rows.begin, rows.end) into `out` in the canonical layout
  // (pixels x bands, native byte order). out.size() must be rows * bytes_per_row.
  virtual Status read_rows(RowRange rows, std::span<std::byte> out) const = 0;
  // Whether reading a row decodes more than the row (compressed chunks): readers of
  // scattered rows then read through the gaps rather than decode a chunk again per row.
  virtual bool compressed() const { return false; }
  // Whether read_rows calls HDF5, which is not thread-safe: another thread may then not
  // use HDF5 while this cube reads (io/write_behind.hpp).
  virtual bool reads_through_hdf5() const { return format() == CubeFormat::hdf5; }

  // The bytes read_rows(rows) would give, when they lie in the memory of `device` (a GPU;
  // -1 the host) already in that order (a loaded image of the file, io/file_image.hpp):
  // tiles for that device then borrow them. Null when they must be read.
  virtual std::shared_ptr<std::byte[]> rows_in_memory(RowRange /*rows*/, int /*device*/) const { return nullptr; }

  // Reads the core rows plus up to `halo_rows` rows on each side (clipped at the edges).
  Result<Tile> read_tile(RowRange core, std::int64_t halo_rows = 0) const;
  // The same into an existing tile, reusing its memory when large enough, or borrowing
  // the rows where they lie in the memory of `device`, the GPU whose operations take the
  // tile (Tile::device(); -1: host memory only).
  Status read_tile_into(Tile& tile, RowRange core, std::int64_t halo_rows = 0, const HostAllocator& allocator = {},
                        int device = -1) const;
};

// Opens a scene by path (ENVI header/data file, HDF5 cube or EMIT granule). With a
// communicator of several ranks, HDF5 files are opened through the MPI-IO driver.
// Scenes that carry a scaling read in the process's scene units (io/units.hpp:
// physical unless `--units raw`).
Result<std::unique_ptr<Cube>> open_cube(const std::string& path, const mpi::Comm* comm = nullptr);
// The same with the stored numbers and the scaling in the metadata (info, ingest, export).
Result<std::unique_ptr<Cube>> open_stored_cube(const std::string& path, const mpi::Comm* comm = nullptr);

// Writes a scene row range by row range. Data go to a temporary name; commit()
// renames into place. Destroying an uncommitted writer removes the temporary files.
class CubeWriter {
 public:
  virtual ~CubeWriter() = default;
  virtual const CubeInfo& info() const = 0;
  // `rows` in canonical layout, of info().type.
  virtual Status write_rows(RowRange rows, std::span<const std::byte> data) = 0;
  // Finishes the file without giving it its final name: checks that every row was
  // written, flushes, closes and runs the finisher. Whoever commits several outputs
  // closes them all first, so that what can fail fails before any of them appears.
  virtual Status close() { return {}; }
  // close() when not yet done, then the rename to the final name.
  virtual Status commit() = 0;
  // Allocates the file space of `rows` before they are written (any thread, before the
  // writes begin): a full disk fails before the work, and on memory file systems the
  // writes then only copy, without taking turns to allocate under the file's lock
  // (docs/PERFORMANCE.md, "Output space reserved"). A no-op where it cannot.
  virtual Status reserve(RowRange rows) { (void)rows; return {}; }
  // `finish` runs in commit(), on the rank that renames, once every row is written and
  // the file closed, before it appears under its final name: what must appear with the
  // data or not at all (MNF's statistics). Its error stops the commit.
  using Finisher = std::function<Status(const std::string& temporary)>;
  void finish_before_commit(Finisher finish) { finish_ = std::move(finish); }
  // True when every rank must make each write_rows call in step (collective HDF5):
  // such writes stay on the caller's thread.
  virtual bool writes_in_step() const { return false; }
  // Whether write_rows calls HDF5 (see Cube::reads_through_hdf5).
  virtual bool writes_through_hdf5() const { return false; }

 protected:
  Status finish(const std::string& temporary) const { return finish_ ? finish_(temporary) : Status{}; }

 private:
  Finisher finish_;
};

struct WriteOptions {
  Interleave interleave = Interleave::bip;     // ENVI only
  ByteOrder byte_order = ByteOrder::little;    // ENVI only
  const mpi::Comm* comm = nullptr;             // HDF5: collective when several ranks
  std::string reported_as;                     // HDF5: the file errors name (default: the path)
};

// Creates a writer for `path`; the format follows the file name as for open_cube.
Result<std::unique_ptr<CubeWriter>> create_cube(const std::string& path, const CubeInfo& info,
                                                const WriteOptions& options = {});

}  // namespace hb::io
