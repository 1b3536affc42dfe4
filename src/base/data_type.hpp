// ENVI data type codes and the sample layouts (interleaves) a cube file can have.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hb {

// Values are the ENVI "data type" codes. Complex types (6, 9) are not supported.
enum class DataType : int {
  u8 = 1,
  i16 = 2,
  i32 = 3,
  f32 = 4,
  f64 = 5,
  u16 = 12,
  u32 = 13,
  i64 = 14,
  u64 = 15,
};

std::optional<DataType> data_type_from_envi_code(long code);
std::size_t bytes_per_sample(DataType type);
std::string_view data_type_name(DataType type);  // "int16", "float32", ...
std::optional<DataType> data_type_from_name(std::string_view name);
bool is_integer(DataType type);

// How bands and pixels are ordered in a file. Tiles in memory are always BIP.
enum class Interleave { bsq, bil, bip };

std::string_view interleave_name(Interleave interleave);  // "bsq", "bil", "bip"
std::optional<Interleave> interleave_from_name(std::string_view name);  // case-insensitive

enum class ByteOrder : int { little = 0, big = 1 };
ByteOrder native_byte_order();

// Calls f(T{}) with T the C++ type of `type`; the one place that switches on it.
template <class F>
decltype(auto) visit_data_type(DataType type, F&& f) {
  switch (type) {
    case DataType::u8: return f(std::uint8_t{});
    case DataType::i16: return f(std::int16_t{});
    case DataType::i32: return f(std::int32_t{});
    case DataType::f32: return f(float{});
    case DataType::f64: return f(double{});
    case DataType::u16: return f(std::uint16_t{});
    case DataType::u32: return f(std::uint32_t{});
    case DataType::i64: return f(std::int64_t{});
    case DataType::u64: return f(std::uint64_t{});
  }
  return f(std::uint8_t{});
}

}  // namespace hb
