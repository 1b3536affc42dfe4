#include "io/hdf5_layout.hpp"

#include <algorithm>

namespace hb::io::h5 {

std::array<hsize_t, 3> chunk_shape(const CubeInfo& info) {
  const std::int64_t row_bytes = info.bytes_per_row();
  std::int64_t rows = std::clamp<std::int64_t>(kChunkTargetBytes / row_bytes, 1, info.shape.lines);
  std::int64_t samples = info.shape.samples;
  if (row_bytes > kChunkMaxBytes) {
    rows = 1;
    samples = std::max<std::int64_t>(1, kChunkMaxBytes / info.bytes_per_pixel());
  }
  return {static_cast<hsize_t>(rows), static_cast<hsize_t>(samples),
          static_cast<hsize_t>(info.shape.bands)};
}

hid_t memory_type(DataType type) {
  switch (type) {
    case DataType::u8: return H5T_NATIVE_UINT8;
    case DataType::i16: return H5T_NATIVE_INT16;
    case DataType::i32: return H5T_NATIVE_INT32;
    case DataType::f32: return H5T_NATIVE_FLOAT;
    case DataType::f64: return H5T_NATIVE_DOUBLE;
    case DataType::u16: return H5T_NATIVE_UINT16;
    case DataType::u32: return H5T_NATIVE_UINT32;
    case DataType::i64: return H5T_NATIVE_INT64;
    case DataType::u64: return H5T_NATIVE_UINT64;
  }
  return H5T_NATIVE_UINT8;
}

hid_t file_type(DataType type) {
  switch (type) {
    case DataType::u8: return H5T_STD_U8LE;
    case DataType::i16: return H5T_STD_I16LE;
    case DataType::i32: return H5T_STD_I32LE;
    case DataType::f32: return H5T_IEEE_F32LE;
    case DataType::f64: return H5T_IEEE_F64LE;
    case DataType::u16: return H5T_STD_U16LE;
    case DataType::u32: return H5T_STD_U32LE;
    case DataType::i64: return H5T_STD_I64LE;
    case DataType::u64: return H5T_STD_U64LE;
  }
  return H5T_STD_U8LE;
}

std::optional<DataType> data_type_of(hid_t hdf5_type) {
  const std::size_t size = H5Tget_size(hdf5_type);
  switch (H5Tget_class(hdf5_type)) {
    case H5T_INTEGER: {
      const bool is_signed = H5Tget_sign(hdf5_type) == H5T_SGN_2;
      if (size == 1 && !is_signed) return DataType::u8;
      if (size == 2) return is_signed ? DataType::i16 : DataType::u16;
      if (size == 4) return is_signed ? DataType::i32 : DataType::u32;
      if (size == 8) return is_signed ? DataType::i64 : DataType::u64;
      return std::nullopt;
    }
    case H5T_FLOAT:
      if (size == 4) return DataType::f32;
      if (size == 8) return DataType::f64;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace hb::io::h5
