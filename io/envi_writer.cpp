// Writes an ENVI cube (NAME.hdr + NAME.img) from canonical rows arriving in any order.
// Both files are written under temporary names; commit() renames the data file and
// then the header, so a header never appears without its complete data.
#include <algorithm>
#include <cctype>
#include <mutex>
#include <optional>
#include <vector>

#include "io/atomic_file.hpp"
#include "io/envi_cube.hpp"
#include "io/envi_layout.hpp"
#include "io/posix_file.hpp"
#include "mpi/agree.hpp"

namespace hb::io {
namespace {

bool has_hdr_extension(const std::string& path) {
  if (path.size() < 4) return false;
  std::string ext = path.substr(path.size() - 4);
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".hdr";
}

class EnviWriter final : public CubeWriter {
 public:
  // `header_file` and `data_file` are held by rank 0 (or the only rank) alone.
  EnviWriter(EnviHeader header, std::string final_header, std::optional<AtomicPath> header_file,
             std::optional<AtomicPath> data_file, PosixFile data, const mpi::Comm* parallel)
      : header_(std::move(header)),
        final_header_(std::move(final_header)),
        parallel_(parallel),
        layout_{header_.info.shape, bytes_per_sample(header_.info.type), 0, header_.interleave},
        header_file_(std::move(header_file)),
        data_file_(std::move(data_file)),
        data_(std::move(data)),
        written_(static_cast<std::size_t>(header_.info.shape.lines), false) {}

  const CubeInfo& info() const override { return header_.info; }

  Status write_rows(RowRange rows, std::span<const std::byte> data) override {
    if (rows.begin < 0 || rows.end > layout_.shape.lines || rows.begin > rows.end)
      return internal("row range out of the scene");
    if (static_cast<std::int64_t>(data.size()) != rows.rows() * layout_.row_bytes())
      return internal("data size does not match the row range");
    HB_TRY(claim(rows));
    std::span<const std::byte> file_order = data;
    std::vector<std::byte> scratch;
    const bool swap = header_.byte_order != native_byte_order() && layout_.sample_bytes > 1;
    if (swap || layout_.interleave != Interleave::bip) {
      scratch.resize(data.size());
      envi::canonical_to_file(layout_, rows.rows(), data.data(), scratch.data());
      if (swap) envi::swap_bytes(scratch, layout_.sample_bytes);
      file_order = scratch;
    }
    return named_after_output(layout_.for_each_extent(rows, [&](std::int64_t at, std::int64_t from, std::int64_t bytes) {
      return data_.write_at(at, file_order.subspan(static_cast<std::size_t>(from), static_cast<std::size_t>(bytes)));
    }));
  }

  Status reserve(RowRange rows) override {
    const std::int64_t lines = layout_.shape.lines;
    rows = {std::clamp<std::int64_t>(rows.begin, 0, lines), std::clamp<std::int64_t>(rows.end, 0, lines)};
    if (rows.rows() <= 0) return {};
    return named_after_output(layout_.for_each_extent(rows, [&](std::int64_t at, std::int64_t, std::int64_t bytes) {
      return data_.reserve(at, bytes);
    }));
  }

  Status close() override {
    if (closed_) return {};
    HB_TRY(parallel_ != nullptr ? close_parallel() : close_alone());
    closed_ = true;
    return {};
  }

  Status commit() override {
    HB_TRY(close());
    Status renamed;
    if (data_file_) renamed = data_file_->commit();
    if (header_file_ && renamed.ok()) renamed = header_file_->commit();
    return parallel_ != nullptr ? mpi::agree(renamed, *parallel_) : renamed;
  }

 private:
  // Errors of the data file name the output the user asked for, not its temporary.
  Status named_after_output(Status status) const {
    if (status.ok()) return status;
    return Error{status.error().kind, final_header_, status.error().field, status.error().message};
  }

  Error internal(std::string message) const {
    return Error{ErrorKind::internal, final_header_, {}, std::move(message)};
  }

  Status close_alone() {
    {
      std::lock_guard lock(mutex_);
      if (rows_written_ != layout_.shape.lines)
        return internal("only " + std::to_string(rows_written_) + " of " + std::to_string(layout_.shape.lines) +
                        " rows were written");
    }
    HB_TRY(named_after_output(data_.sync_and_close()));
    HB_TRY(write_header_text());
    return finish(data_file_->temporary());
  }

  // Every rank flushes its rows; rank 0 checks that the ranks wrote every row between
  // them, then writes the header and runs the finisher. Every rank learns the outcome.
  Status close_parallel() {
    HB_TRY(mpi::agree(named_after_output(data_.sync_and_close()), *parallel_));
    std::vector<std::uint8_t> all(written_.begin(), written_.end());
    MPI_Allreduce(MPI_IN_PLACE, all.data(), static_cast<int>(all.size()), MPI_UINT8_T, MPI_MAX, parallel_->handle());
    const auto missing = std::find(all.begin(), all.end(), std::uint8_t{0});
    if (missing != all.end())
      return internal("row " + std::to_string(missing - all.begin()) + " was never written; output not committed");
    Status done;
    if (parallel_->is_root()) {
      done = write_header_text();
      if (done.ok()) done = finish(data_file_->temporary());
    }
    return mpi::agree(done, *parallel_);
  }

  // Marks rows as written; each row may be written once.
  Status claim(RowRange rows) {
    std::lock_guard lock(mutex_);
    for (std::int64_t r = rows.begin; r < rows.end; ++r)
      if (written_[static_cast<std::size_t>(r)]) return internal("row " + std::to_string(r) + " written twice");
    for (std::int64_t r = rows.begin; r < rows.end; ++r) written_[static_cast<std::size_t>(r)] = true;
    rows_written_ += rows.rows();
    return {};
  }

  Status write_header_text() {
    const std::string text = format_envi_header(header_);
    auto file = PosixFile::create(header_file_->temporary());
    if (!file) return file.error();
    HB_TRY(file->write_at(0, std::as_bytes(std::span(text))));
    return file->sync_and_close();
  }

  EnviHeader header_;
  std::string final_header_;
  const mpi::Comm* parallel_;
  envi::Layout layout_;
  std::optional<AtomicPath> header_file_;
  std::optional<AtomicPath> data_file_;
  PosixFile data_;
  std::mutex mutex_;
  std::vector<bool> written_;
  std::int64_t rows_written_ = 0;
  bool closed_ = false;
};

}  // namespace

EnviPaths envi_output_paths(const std::string& path) {
  if (has_hdr_extension(path)) return {path, path.substr(0, path.size() - 4) + ".img"};
  const auto slash = path.find_last_of('/');
  const auto dot = path.find_last_of('.');
  const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  return {(has_ext ? path.substr(0, dot) : path) + ".hdr", path};
}


Result<std::unique_ptr<CubeWriter>> create_envi_cube(const std::string& path, const CubeInfo& info,
                                                     Interleave interleave, ByteOrder byte_order,
                                                     const mpi::Comm* comm) {
  const mpi::Comm* parallel = comm != nullptr && comm->is_parallel() ? comm : nullptr;
  const EnviPaths paths = envi_output_paths(path);
  EnviHeader header{info, 0, interleave, byte_order};
  header.info.meta.envi_interleave = interleave;
  header.info.meta.envi_byte_order = byte_order;
  // The header we will write must read back: this checks shape, overflow and list lengths.
  if (auto check = parse_envi_header(format_envi_header(header), paths.header); !check) return check.error();

  // Rank 0 (or the only rank) owns the temporary names; the others open its data file.
  std::optional<AtomicPath> data_file, header_file;
  Result<PosixFile> data = PosixFile{};
  std::string temporary;
  if (parallel == nullptr || parallel->is_root()) {
    data_file.emplace(paths.data);
    header_file.emplace(paths.header);
    temporary = data_file->temporary();
    data = PosixFile::create(temporary);
    if (data) {
      const Status sized = data->resize(info.total_bytes());
      if (!sized) data = sized.error();
    }
  }
  if (parallel == nullptr) {
    if (!data) return data.error();
  } else {
    HB_TRY(mpi::agree(data ? Status{} : Status{data.error()}, *parallel));
    temporary = parallel->broadcast(temporary);
    if (!parallel->is_root()) data = PosixFile::open_write(temporary);
    HB_TRY(mpi::agree(data ? Status{} : Status{data.error()}, *parallel));
  }
  return std::unique_ptr<CubeWriter>(new EnviWriter(std::move(header), paths.header, std::move(header_file),
                                                    std::move(data_file), std::move(*data), parallel));
}

}  // namespace hb::io
