#include "io/emit/emit_granule.hpp"

#include <array>

#include "io/emit/chunk_reader.hpp"
#include "io/emit/emit_metadata.hpp"
#include "io/hdf5_access.hpp"
#include "io/hdf5_cube.hpp"

namespace hb::io::emit {
namespace {

constexpr std::array<const char*, 3> kVariables = {"reflectance", "radiance", "mask"};

bool has_link(hid_t file, const char* name) { return H5Lexists(file, name, H5P_DEFAULT) > 0; }

// Granules are deflated in chunks of several rows; reads go row range by row range, so
// a chunk cache that holds a few whole chunks decompresses each chunk once instead of
// once per range touching it (HDF5's default cache is 1 MiB).
h5::PropertyList chunk_cache_for_rows() {
  constexpr std::size_t kCacheBytes = std::size_t{128} << 20;
  constexpr std::size_t kSlots = 12421;  // a prime, as HDF5 advises, well above the chunks held
  h5::PropertyList dapl(H5Pcreate(H5P_DATASET_ACCESS));
  H5Pset_chunk_cache(dapl.get(), kSlots, kCacheBytes, 1.0);
  return dapl;
}

}  // namespace

std::optional<std::string> granule_variable(const std::string& path) {
  h5::silence_hdf5_errors();
  if (H5Fis_hdf5(path.c_str()) <= 0) return std::nullopt;
  h5::File file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT));
  if (!file || has_link(file.get(), "cube")) return std::nullopt;
  for (const char* name : kVariables)
    if (has_link(file.get(), name)) return std::string(name);
  return std::nullopt;
}

Result<std::unique_ptr<Cube>> open_granule(const std::string& path, const std::string& variable,
                                           const mpi::Comm* comm) {
  h5::silence_hdf5_errors();
  const mpi::Comm* parallel = h5::parallel_comm(comm);
  auto file = open_hdf5_file(path, parallel);
  if (!file) return file.error();
  const std::string name = "/" + variable;
  h5::Dataset dataset(H5Dopen2(file->get(), name.c_str(), chunk_cache_for_rows().get()));
  if (!dataset) return bad_input(path, name, "is not a dataset: " + h5::hdf5_error_detail());

  CubeInfo info;
  auto shape = read_hdf5_shape(dataset.get(), path, name);
  if (!shape) return shape.error();
  info.shape = *shape;
  auto type = read_hdf5_type(dataset.get(), path, name);
  if (!type) return type.error();
  info.type = *type;
  auto meta = read_granule_metadata(file->get(), dataset.get(), variable, info.shape.bands, path);
  if (!meta) return meta.error();
  info.meta = std::move(*meta);
  // One rank reads alone: chunks inflate on every core. Collective reads keep H5Dread.
  if (parallel == nullptr)
    if (auto threaded = threaded_chunk_cube(path, name, info, *file, dataset)) return threaded;
  return hdf5_dataset_cube(path, name, std::move(info), std::move(*file), std::move(dataset), parallel);
}

}  // namespace hb::io::emit
