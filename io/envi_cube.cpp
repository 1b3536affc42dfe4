// Reads row ranges of an ENVI cube of any interleave and byte order: only the
// requested rows are read (one pread for BIP/BIL, one per band for BSQ), then
// reordered into the canonical layout. Where the data file was loaded into memory
// ahead (io/file_image.hpp), tiles of a BIP file in native byte order (the canonical
// layout already) for the image's device borrow its rows, and reads come from an image
// in host memory.
#include "io/envi_cube.hpp"

#include <vector>

#include "io/envi_layout.hpp"
#include "io/file_image.hpp"
#include "io/posix_file.hpp"

namespace hb::io {
namespace {

class EnviCube final : public Cube {
 public:
  EnviCube(EnviPaths paths, EnviHeader header, PosixFile data, std::int64_t header_bytes)
      : image_(file_image(paths.data)),
        header_path_(std::move(paths.header)),
        info_(std::move(header.info)),
        layout_{info_.shape, bytes_per_sample(info_.type), header.header_offset, header.interleave},
        byte_order_(header.byte_order),
        data_(std::move(data)),
        header_bytes_(header_bytes) {}

  const CubeInfo& info() const override { return info_; }
  const std::string& path() const override { return header_path_; }
  CubeFormat format() const override { return CubeFormat::envi; }
  std::int64_t bytes_on_disk() const override { return data_.size() + header_bytes_; }

  Status read_rows(RowRange rows, std::span<std::byte> out) const override {
    if (rows.begin < 0 || rows.end > info_.shape.lines || rows.begin > rows.end)
      return Error{ErrorKind::internal, header_path_, {}, "row range out of the scene"};
    if (static_cast<std::int64_t>(out.size()) != rows.rows() * layout_.row_bytes())
      return Error{ErrorKind::internal, header_path_, {}, "output buffer does not match the row range"};
    if (rows.empty()) return {};
    if (layout_.interleave == Interleave::bip) {
      HB_TRY(read_data(layout_.header_offset + rows.begin * layout_.row_bytes(), out));
    } else {
      std::vector<std::byte> file_order(out.size());
      HB_TRY(layout_.for_each_extent(rows, [&](std::int64_t at, std::int64_t into, std::int64_t bytes) {
        return read_data(at, std::span(file_order).subspan(static_cast<std::size_t>(into),
                                                            static_cast<std::size_t>(bytes)));
      }));
      envi::file_to_canonical(layout_, rows.rows(), file_order.data(), out.data());
    }
    if (byte_order_ != native_byte_order()) envi::swap_bytes(out, layout_.sample_bytes);
    return {};
  }

  std::shared_ptr<std::byte[]> rows_in_memory(RowRange rows, int device) const override {
    if (!image_ || image_->device != device) return nullptr;
    if (layout_.interleave != Interleave::bip || byte_order_ != native_byte_order()) return nullptr;
    if (rows.begin < 0 || rows.end > info_.shape.lines || rows.empty()) return nullptr;
    const auto at = layout_.header_offset + rows.begin * layout_.row_bytes();
    // An aliasing pointer: the rows keep the whole image alive.
    return {image_->bytes, image_->bytes.get() + at};
  }

 private:
  Status read_data(std::int64_t at, std::span<std::byte> out) const {
    if (!image_ || image_->device != -1) return data_.read_at(at, out);
    std::copy_n(image_->bytes.get() + at, out.size(), out.data());
    return {};
  }

  std::shared_ptr<const FileImage> image_;  // the data file, when it was loaded ahead
  std::string header_path_;
  CubeInfo info_;
  envi::Layout layout_;
  ByteOrder byte_order_;
  PosixFile data_;
  std::int64_t header_bytes_;
};

std::int64_t file_size_or_zero(const std::string& path) {
  auto file = PosixFile::open_read(path);
  return file ? file->size() : 0;
}

}  // namespace

Result<std::unique_ptr<Cube>> open_envi_cube(const std::string& path) {
  auto paths = resolve_envi_paths(path);
  if (!paths) return paths.error();
  auto header = read_envi_header(paths->header);
  if (!header) return header.error();
  auto data = PosixFile::open_read(paths->data);
  if (!data) return data.error();

  const auto& shape = header->info.shape;
  // No overflow: parse_envi_header checked offset + lines * samples * bands * bytes.
  const std::int64_t expected = header->header_offset + header->info.total_bytes();
  if (data->size() != expected)
    return bad_input(paths->data, "size",
                     "data file is " + std::to_string(data->size()) + " bytes, " +
                         (data->size() < expected ? "shorter" : "longer") + " than the " + std::to_string(expected) +
                         " bytes that " + paths->header + " describes (header offset " +
                         std::to_string(header->header_offset) + " + " + std::to_string(shape.lines) + " lines x " +
                         std::to_string(shape.samples) + " samples x " + std::to_string(shape.bands) + " bands x " +
                         std::to_string(bytes_per_sample(header->info.type)) + " bytes)");
  const std::int64_t header_bytes = file_size_or_zero(paths->header);
  return std::unique_ptr<Cube>(new EnviCube(std::move(*paths), std::move(*header), std::move(*data), header_bytes));
}

}  // namespace hb::io
