// Reads a sequence of tiles one ahead, so that reading the next tile from disk overlaps
// whatever the caller does with the current one (GPU work, writing). Two tile buffers
// are reused for the whole sequence. Tiles of at least 1 MiB of scenes read without
// HDF5 (ENVI with pread, EMIT granules by io/emit/chunk_reader.hpp, HDF5 cubes of plain
// rows by io/hdf5_row_reads.hpp) are prefetched on a background thread; the others in
// the caller's thread, because the HDF5 library is not thread-safe and collective reads
// must be made by every rank in step, and a smaller tile takes less than the thread.
#pragma once

#include <array>
#include <future>
#include <vector>

#include "io/cube.hpp"

namespace hb::io {

class TileReader {
 public:
  // `units`: the cube's samples are stored numbers standing for physical ones; every
  // tile carries them (Tile::units(), io::device_source). `device`: the GPU whose
  // operations take the tiles; rows loaded into its memory are borrowed, not read.
  TileReader(const Cube& cube, std::vector<RowRange> cores, std::int64_t halo_rows,
             HostAllocator allocator = {}, const StoredUnits* units = nullptr, int device = -1);
  ~TileReader();
  TileReader(const TileReader&) = delete;
  TileReader& operator=(const TileReader&) = delete;

  // The next tile, or nullptr after the last one. The tile stays valid until the
  // call after next.
  Result<const Tile*> next();

 private:
  void prefetch();
  std::size_t tile_bytes(std::size_t index) const;
  Tile& slot(std::size_t index) { return slots_[index % slots_.size()]; }

  const Cube& cube_;
  std::vector<RowRange> cores_;
  std::int64_t halo_rows_;
  HostAllocator allocator_;
  const StoredUnits* units_;
  int device_;
  std::size_t next_ = 0;
  bool background_;
  std::array<Tile, 2> slots_;
  std::future<Status> pending_;
};

}  // namespace hb::io
