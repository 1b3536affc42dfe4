// How a scene maps onto the HDF5 dataset /cube: element types and the chunk shape.
// The chunk rule is documented (with the reasons for it) in docs/formats.md.
#pragma once

#include <hdf5.h>

#include <array>
#include <cstdint>
#include <optional>

#include "io/metadata.hpp"

namespace hb::io::h5 {

// A chunk is whole rows (all samples, all bands) adding up to at most this many bytes...
inline constexpr std::int64_t kChunkTargetBytes = std::int64_t{2} << 20;
// ...and never more than HDF5's limit on one chunk (its size is stored in 32 bits).
inline constexpr std::int64_t kChunkMaxBytes = (std::int64_t{1} << 32) - 1;

// [rows_per_chunk, samples, bands], rows_per_chunk = max(1, target / bytes_per_row)
// clipped to the scene; only when a single row exceeds the 4 GiB limit are the samples
// split as well. Every dimension of info.shape must be positive.
std::array<hsize_t, 3> chunk_shape(const CubeInfo& info);

// The in-memory (native byte order) and on-disk (little-endian) HDF5 types of `type`.
// Predefined HDF5 types: never closed.
hid_t memory_type(DataType type);
hid_t file_type(DataType type);

// The scene type for a dataset's HDF5 type; nullopt for types we do not support
// (int8, half floats, strings, compounds...).
std::optional<DataType> data_type_of(hid_t hdf5_type);

}  // namespace hb::io::h5
