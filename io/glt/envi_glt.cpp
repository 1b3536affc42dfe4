// ENVI GLTs (AVIRIS, AVIRIS-NG): a two-band signed-integer cube read through open_cube.
#include <fmt/core.h>

#include "io/cube.hpp"
#include "io/glt/glt.hpp"
#include "io/glt/glt_kinds.hpp"
#include "io/glt/map_grid.hpp"

namespace hb::io {
namespace {

class EnviGlt final : public Glt {
 public:
  EnviGlt(std::unique_ptr<Cube> cube, GltGrid grid) : cube_(std::move(cube)), grid_(std::move(grid)) {}
  const std::string& path() const override { return cube_->path(); }
  const GltGrid& grid() const override { return grid_; }
  std::string sample_field() const override { return "band 1"; }
  std::string line_field() const override { return "band 2"; }

  Status read_rows(RowRange rows, GltRows& out) const override {
    std::vector<std::byte> raw(static_cast<std::size_t>(rows.rows() * cube_->info().bytes_per_row()));
    HB_TRY(cube_->read_rows(rows, raw));
    const auto pixels = static_cast<std::size_t>(rows.rows() * grid_.samples);
    out.sample.resize(pixels);
    out.line.resize(pixels);
    if (cube_->info().type == DataType::i16) unpack(reinterpret_cast<const std::int16_t*>(raw.data()), pixels, out);
    else unpack(reinterpret_cast<const std::int32_t*>(raw.data()), pixels, out);
    return {};
  }

 private:
  // Pixel-interleaved (sample, line) pairs -> the two 0-based index planes.
  template <class T>
  static void unpack(const T* entries, std::size_t pixels, GltRows& out) {
    for (std::size_t p = 0; p < pixels; ++p) {
      out.sample[p] = glt_index(entries[2 * p]);
      out.line[p] = glt_index(entries[2 * p + 1]);
    }
  }

  std::unique_ptr<Cube> cube_;
  GltGrid grid_;
};

}  // namespace

Result<std::unique_ptr<Glt>> open_envi_glt(const std::string& path) {
  auto cube = open_cube(path);
  if (!cube) return cube.error();
  const CubeInfo& info = (*cube)->info();
  if (info.type != DataType::i16 && info.type != DataType::i32)
    return bad_input(path, "data type",
                     fmt::format("a GLT holds int16 or int32 pixel indices, not {}", data_type_name(info.type)));
  if (info.shape.bands != 2)
    return bad_input(path, "bands", fmt::format("a GLT has 2 bands (sample, line), not {}", info.shape.bands));
  GltGrid grid{info.shape.lines, info.shape.samples, {}, {}, info.meta.map_info, info.meta.coordinate_system_string};
  if (auto gt = geotransform_from_map_info(info.meta.map_info)) grid.geotransform = *gt;
  grid.spatial_ref = info.meta.coordinate_system_string;
  return std::unique_ptr<Glt>(new EnviGlt(std::move(*cube), std::move(grid)));
}

}  // namespace hb::io
