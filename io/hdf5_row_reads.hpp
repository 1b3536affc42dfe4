// Rows of an HDF5 cube read with pread, past the library. H5Dread runs in the caller's
// thread and may not run beside another thread's HDF5 calls, so tile readers could not
// read an HDF5 scene ahead (io/tile_reader.hpp): a KNN pass over a flightline's MNF
// components waited 0.19 s of its 0.5 s for reads. Where a dataset's rows are plain
// bytes at places HDF5 tells once, at open (contiguous, or chunks of whole rows, every
// chunk written, no filters or external storage, the native byte order, no user
// block), a read is a few preads, which any thread may make. Any other dataset, and
// collective reads under several ranks, stay with the library.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "io/cube.hpp"
#include "io/posix_file.hpp"

namespace hb::io {

class LocatedRows {
 public:
  // Where every row of `dataset` (in `file`, at `path`) is stored; nullopt when its rows
  // are not plain bytes this reader can take.
  static std::optional<LocatedRows> locate(const std::string& path, hid_t file, hid_t dataset, const CubeInfo& info);

  // Rows [rows.begin, rows.end) into `out` (rows x samples x bands elements).
  Status read(RowRange rows, std::span<std::byte> out) const;

 private:
  // Rows from `first_row` on, up to the next run's, stored back to back from `address`.
  struct Run {
    std::int64_t first_row = 0;
    std::int64_t address = 0;
  };
  LocatedRows(std::vector<Run> runs, std::int64_t lines, std::int64_t row_bytes, PosixFile file)
      : runs_(std::move(runs)), lines_(lines), row_bytes_(row_bytes), file_(std::move(file)) {}

  std::vector<Run> runs_;  // by first_row; chunks the file holds back to back share one
  std::int64_t lines_ = 0;
  std::int64_t row_bytes_ = 0;
  PosixFile file_;
};

}  // namespace hb::io
