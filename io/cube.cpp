#include "io/cube.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "io/envi_cube.hpp"
#include "io/gtiff/gtiff_writer.hpp"
#include "io/hdf5_cube.hpp"

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

Status Cube::read_tile_into(Tile& tile, RowRange core, std::int64_t halo_rows, const HostAllocator& allocator) const {
  const auto& shape = info().shape;
  if (core.begin < 0 || core.end > shape.lines || core.empty())
    return Error{ErrorKind::internal, path(), {}, "row range out of the scene"};
  const RowRange held = with_halo(core, halo_rows, shape.lines);
  tile.reshape(info().type, shape.samples, shape.bands, held, core, allocator);
  return read_rows(held, tile.bytes());
}

Result<std::unique_ptr<Cube>> open_cube(const std::string& path, const mpi::Comm* comm) {
  const CubeFormat format = format_from_path(path);
  if (format == CubeFormat::hdf5) return open_hdf5_cube(path, comm);
  if (format == CubeFormat::gtiff)
    return bad_input(path, "format", "GeoTIFF is an output format only; read the ENVI or HDF5 product instead");
  return open_envi_cube(path);
}

Result<std::unique_ptr<CubeWriter>> create_cube(const std::string& path, const CubeInfo& info,
                                                const WriteOptions& options) {
  const CubeFormat format = format_from_path(path);
  if (format == CubeFormat::hdf5) return create_hdf5_cube(path, info, options.comm, options.reported_as);
  if (format == CubeFormat::gtiff) return create_gtiff_cube(path, info, options.comm);
  return create_envi_cube(path, info, options.interleave, options.byte_order, options.comm);
}

}  // namespace hb::io
