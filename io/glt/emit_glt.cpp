// EMIT GLTs: location/glt_x and location/glt_y of a granule, read with the HDF5 C API
// (serial driver: each rank reads its own rows).
#include <fmt/core.h>

#include "io/cube.hpp"
#include "io/glt/glt.hpp"
#include "io/glt/glt_kinds.hpp"
#include "io/glt/map_grid.hpp"
#include "io/hdf5_attributes.hpp"
#include "io/hdf5_handle.hpp"

namespace hb::io {
namespace {

constexpr const char* kSampleDataset = "location/glt_x";
constexpr const char* kLineDataset = "location/glt_y";

// The 2-D shape of an integer dataset, or bad input naming it.
Result<std::pair<hsize_t, hsize_t>> glt_plane_shape(hid_t dataset, const std::string& path, const char* name) {
  h5::Datatype type(H5Dget_type(dataset));
  if (H5Tget_class(type.get()) != H5T_INTEGER)
    return bad_input(path, name, "a GLT holds integer pixel indices");
  h5::Dataspace space(H5Dget_space(dataset));
  hsize_t dims[2] = {0, 0};
  if (H5Sget_simple_extent_ndims(space.get()) != 2 || H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 2)
    return bad_input(path, name, "a GLT plane has 2 dimensions (ortho_y, ortho_x)");
  return std::pair{dims[0], dims[1]};
}

// The length of a 1-D dataset at the root (a netCDF dimension), when present.
std::optional<std::int64_t> dimension_length(hid_t file, const char* name) {
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return std::nullopt;
  h5::Dataset dim(H5Dopen2(file, name, H5P_DEFAULT));
  if (!dim) return std::nullopt;
  h5::Dataspace space(H5Dget_space(dim.get()));
  hsize_t length = 0;
  if (H5Sget_simple_extent_ndims(space.get()) != 1) return std::nullopt;
  H5Sget_simple_extent_dims(space.get(), &length, nullptr);
  return static_cast<std::int64_t>(length);
}

class EmitGlt final : public Glt {
 public:
  EmitGlt(std::string path, h5::File file, h5::Dataset x, h5::Dataset y, GltGrid grid, std::optional<CubeShape> source)
      : path_(std::move(path)), file_(std::move(file)), x_(std::move(x)), y_(std::move(y)), grid_(std::move(grid)),
        source_(source) {}
  const std::string& path() const override { return path_; }
  const GltGrid& grid() const override { return grid_; }
  std::optional<CubeShape> source_shape() const override { return source_; }
  std::string sample_field() const override { return kSampleDataset; }
  std::string line_field() const override { return kLineDataset; }

  Status read_rows(RowRange rows, GltRows& out) const override {
    const auto pixels = static_cast<std::size_t>(rows.rows() * grid_.samples);
    out.sample.resize(pixels);
    out.line.resize(pixels);
    HB_TRY(read_plane(x_.get(), kSampleDataset, rows, out.sample));
    return read_plane(y_.get(), kLineDataset, rows, out.line);
  }

 private:
  Status read_plane(hid_t dataset, const char* name, RowRange rows, std::vector<std::int32_t>& plane) const {
    if (rows.empty()) return {};
    h5::Dataspace file_space(H5Dget_space(dataset));
    const hsize_t start[2] = {static_cast<hsize_t>(rows.begin), 0};
    const hsize_t count[2] = {static_cast<hsize_t>(rows.rows()), static_cast<hsize_t>(grid_.samples)};
    h5::Dataspace memory(H5Screate_simple(2, count, nullptr));
    if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dread(dataset, H5T_NATIVE_INT32, memory.get(), file_space.get(), H5P_DEFAULT, plane.data()) < 0)
      return bad_input(path_, name, "cannot read rows: " + h5::hdf5_error_detail());
    for (auto& entry : plane) entry = glt_index(entry);
    return {};
  }

  std::string path_;
  h5::File file_;
  h5::Dataset x_, y_;
  GltGrid grid_;
  std::optional<CubeShape> source_;
};

Result<GltGrid> emit_grid(hid_t file, const std::string& path, std::pair<hsize_t, hsize_t> shape) {
  const h5::Attributes attrs(file, path, "/");
  GltGrid grid;
  grid.lines = static_cast<std::int64_t>(shape.first);
  grid.samples = static_cast<std::int64_t>(shape.second);
  auto gt = attrs.get_doubles("geotransform");
  if (!gt) return gt.error();
  if (!*gt || (*gt)->size() != 6) return bad_input(path, "geotransform", "an EMIT granule has 6 geotransform values");
  grid.geotransform = **gt;
  auto wkt = attrs.get_string("spatial_ref");
  if (!wkt) return wkt.error();
  grid.spatial_ref = wkt->value_or("");
  grid.coordinate_system_string = grid.spatial_ref;
  grid.map_info = map_info_from_geotransform(grid.geotransform, grid.spatial_ref);
  return grid;
}

}  // namespace

Result<std::unique_ptr<Glt>> open_emit_glt(const std::string& path) {
  h5::silence_hdf5_errors();
  h5::File file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file) return bad_input(path, "file", "not an HDF5/netCDF4 file: " + h5::hdf5_error_detail());
  h5::Dataset datasets[2];
  const char* names[2] = {kSampleDataset, kLineDataset};
  std::pair<hsize_t, hsize_t> shapes[2];
  for (int i = 0; i < 2; ++i) {
    if (H5Lexists(file.get(), "location", H5P_DEFAULT) <= 0 || H5Lexists(file.get(), names[i], H5P_DEFAULT) <= 0)
      return bad_input(path, names[i], "missing: not an EMIT granule with a GLT");
    datasets[i] = h5::Dataset(H5Dopen2(file.get(), names[i], H5P_DEFAULT));
    auto shape = glt_plane_shape(datasets[i].get(), path, names[i]);
    if (!shape) return shape.error();
    shapes[i] = *shape;
  }
  if (shapes[0] != shapes[1]) return bad_input(path, kLineDataset, "shape differs from location/glt_x");
  auto grid = emit_grid(file.get(), path, shapes[0]);
  if (!grid) return grid.error();
  std::optional<CubeShape> source;
  const auto lines = dimension_length(file.get(), "downtrack");
  const auto samples = dimension_length(file.get(), "crosstrack");
  if (lines && samples) source = CubeShape{*lines, *samples, 0};
  return std::unique_ptr<Glt>(new EmitGlt(path, std::move(file), std::move(datasets[0]), std::move(datasets[1]),
                                          std::move(*grid), source));
}

Result<std::unique_ptr<Glt>> open_glt(const std::string& path) {
  if (format_from_path(path) == CubeFormat::hdf5) return open_emit_glt(path);
  return open_envi_glt(path);
}

}  // namespace hb::io
