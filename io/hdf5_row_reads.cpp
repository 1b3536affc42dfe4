#include "io/hdf5_row_reads.hpp"

#include <algorithm>

#include "io/hdf5_handle.hpp"
#include "io/hdf5_layout.hpp"

namespace hb::io {
namespace {

// Whether the file starts with HDF5's own data: chunk addresses count from the end of
// a user block in some library versions and from the file's start in others (HDF5
// pull request 4236), so a file with one is left to the library.
bool no_user_block(hid_t file) {
  h5::PropertyList fcpl(H5Fget_create_plist(file));
  hsize_t user_block = 0;
  return fcpl && H5Pget_userblock(fcpl.get(), &user_block) >= 0 && user_block == 0;
}

// Plain bytes in this file: no filters, no external storage, and stored as this host
// holds the element type.
bool plain_bytes(hid_t dataset, hid_t dcpl, DataType type) {
  if (H5Pget_nfilters(dcpl) != 0 || H5Pget_external_count(dcpl) != 0) return false;
  h5::Datatype stored(H5Dget_type(dataset));
  return stored && H5Tequal(stored.get(), h5::memory_type(type)) > 0;
}

}  // namespace

std::optional<LocatedRows> LocatedRows::locate(const std::string& path, hid_t file, hid_t dataset,
                                               const CubeInfo& info) {
  h5::PropertyList dcpl(H5Dget_create_plist(dataset));
  if (!dcpl || !no_user_block(file) || !plain_bytes(dataset, dcpl.get(), info.type)) return std::nullopt;
  const auto& shape = info.shape;
  const std::int64_t row_bytes = info.bytes_per_row();
  std::vector<Run> runs;
  std::int64_t stored_end = 0;  // the end of the last byte any row is stored at
  const H5D_layout_t layout = H5Pget_layout(dcpl.get());
  if (layout == H5D_CONTIGUOUS) {
    const haddr_t address = H5Dget_offset(dataset);
    if (address == HADDR_UNDEF) return std::nullopt;  // never written: the library gives fill values
    runs.push_back({0, static_cast<std::int64_t>(address)});
    stored_end = runs.back().address + shape.lines * row_bytes;
  } else if (layout == H5D_CHUNKED) {
    hsize_t chunk[3] = {0, 0, 0};
    if (H5Pget_chunk(dcpl.get(), 3, chunk) != 3 || chunk[1] != static_cast<hsize_t>(shape.samples) ||
        chunk[2] != static_cast<hsize_t>(shape.bands))
      return std::nullopt;  // not whole rows
    const auto chunk_rows = static_cast<std::int64_t>(chunk[0]);
    for (std::int64_t row = 0; row < shape.lines; row += chunk_rows) {
      const hsize_t at[3] = {static_cast<hsize_t>(row), 0, 0};
      unsigned mask = 0;
      haddr_t address = HADDR_UNDEF;
      hsize_t bytes = 0;
      if (H5Dget_chunk_info_by_coord(dataset, at, &mask, &address, &bytes) < 0 || address == HADDR_UNDEF ||
          bytes != static_cast<hsize_t>(chunk_rows * row_bytes))
        return std::nullopt;
      const auto where = static_cast<std::int64_t>(address);
      stored_end = std::max(stored_end, where + chunk_rows * row_bytes);
      const bool follows = !runs.empty() && runs.back().address + (row - runs.back().first_row) * row_bytes == where;
      if (!follows) runs.push_back({row, where});
    }
  } else {
    return std::nullopt;
  }
  // A file cut short keeps the library's reads and the errors they give.
  auto raw = PosixFile::open_read(path);
  if (!raw || raw->size() < stored_end) return std::nullopt;
  return LocatedRows(std::move(runs), shape.lines, row_bytes, std::move(*raw));
}

Status LocatedRows::read(RowRange rows, std::span<std::byte> out) const {
  // The run holding rows.begin: the last one starting at or before it.
  auto run = std::upper_bound(runs_.begin(), runs_.end(), rows.begin,
                              [](std::int64_t row, const Run& r) { return row < r.first_row; });
  std::size_t done = 0;
  for (std::int64_t row = rows.begin; row < rows.end; ++run) {
    const auto& r = *std::prev(run);
    const std::int64_t run_end = run == runs_.end() ? lines_ : run->first_row;
    const std::int64_t count = std::min(rows.end, run_end) - row;
    const auto bytes = static_cast<std::size_t>(count * row_bytes_);
    HB_TRY(file_.read_at(r.address + (row - r.first_row) * row_bytes_, out.subspan(done, bytes)));
    done += bytes;
    row += count;
  }
  return {};
}

}  // namespace hb::io
