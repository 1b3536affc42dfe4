#include "io/cube.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "io/aviris/aviris_classic.hpp"
#include "io/emit/emit_granule.hpp"
#include "io/envi_cube.hpp"
#include "io/gtiff/gtiff_writer.hpp"
#include "io/hdf5_cube.hpp"
#include "io/mask.hpp"
#include "io/resample_view.hpp"
#include "io/units.hpp"

namespace hb::io {

CubeFormat format_from_path(const std::string& path) {
  auto ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".h5" || ext == ".hdf5" || ext == ".he5" || ext == ".nc") return CubeFormat::hdf5;
  if (ext == ".tif" || ext == ".tiff") return CubeFormat::gtiff;
  return CubeFormat::envi;
}

Result<Tile> Cube::read_tile(RowRange core, std::int64_t halo_rows) const {
  Tile tile;
  HB_TRY(read_tile_into(tile, core, halo_rows));
  return tile;
}

Status Cube::read_tile_into(Tile& tile, RowRange core, std::int64_t halo_rows, const HostAllocator& allocator,
                            int device) const {
  const auto& shape = info().shape;
  if (core.begin < 0 || core.end > shape.lines || core.empty())
    return Error{ErrorKind::internal, path(), {}, "row range out of the scene"};
  const RowRange held = with_halo(core, halo_rows, shape.lines);
  if (auto rows = rows_in_memory(held, device)) {
    tile.borrow(info().type, shape.samples, shape.bands, held, core, std::move(rows), device);
    return {};
  }
  tile.reshape(info().type, shape.samples, shape.bands, held, core, allocator);
  return read_rows(held, tile.bytes());
}

namespace {

Result<std::unique_ptr<Cube>> open_by_format(const std::string& path, const mpi::Comm* comm) {
  const CubeFormat format = format_from_path(path);
  if (format == CubeFormat::gtiff)
    return bad_input(path, "format", "GeoTIFF is an output format only; read the ENVI or HDF5 product instead");
  if (format == CubeFormat::hdf5) {
    if (auto variable = emit::granule_variable(path)) return emit::open_granule(path, *variable, comm);
    return open_hdf5_cube(path, comm);
  }
  auto cube = open_envi_cube(path);
  if (!cube) return cube;
  auto paths = resolve_envi_paths(path);
  if (!paths) return paths.error();
  return aviris::with_flightline_calibration(std::move(*cube), paths->data);
}

Status check_scaling(const Cube& cube) {
  const auto& info = cube.info();
  const auto& scaling = info.meta.scaling;
  if (!scaling.applies()) return {};
  if (static_cast<std::int64_t>(scaling.gain.size()) != info.shape.bands ||
      scaling.offset.size() != scaling.gain.size())
    return bad_input(cube.path(), "scaling_gain", "has " + std::to_string(scaling.gain.size()) +
                                                      " values but bands = " + std::to_string(info.shape.bands));
  return {};
}

}  // namespace

Result<std::unique_ptr<Cube>> open_stored_cube(const std::string& path, const mpi::Comm* comm) {
  auto cube = open_by_format(path, comm);
  if (!cube) return cube;
  HB_TRY(check_scaling(**cube));
  return cube;
}

Result<std::unique_ptr<Cube>> open_cube(const std::string& path, const mpi::Comm* comm) {
  auto cube = open_stored_cube(path, comm);
  if (!cube) return cube;
  auto scene = with_units(std::move(*cube), scene_units());
  if (const MaskSpec* mask = scene_mask(path)) {
    auto masked = with_mask(std::move(scene), *mask);
    if (!masked) return masked;
    scene = std::move(*masked);
  }
  if (auto target = scene_band_target(path)) return resampled_to(std::move(scene), *target);
  return scene;
}

Result<std::unique_ptr<CubeWriter>> create_cube(const std::string& path, const CubeInfo& info,
                                                const WriteOptions& options) {
  const CubeFormat format = format_from_path(path);
  if (format == CubeFormat::hdf5) return create_hdf5_cube(path, info, options.comm, options.reported_as);
  if (format == CubeFormat::gtiff) return create_gtiff_cube(path, info, options.comm);
  return create_envi_cube(path, info, options.interleave, options.byte_order, options.comm);
}

}  // namespace hb::io
