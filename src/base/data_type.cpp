#include "src/base/data_type.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>

namespace hb {
namespace {

struct TypeRow {
  DataType type;
  std::size_t bytes;
  std::string_view name;
  bool integer;
};

constexpr std::array<TypeRow, 9> kTypes{{
    {DataType::u8, 1, "uint8", true},
    {DataType::i16, 2, "int16", true},
    {DataType::i32, 4, "int32", true},
    {DataType::f32, 4, "float32", false},
    {DataType::f64, 8, "float64", false},
    {DataType::u16, 2, "uint16", true},
    {DataType::u32, 4, "uint32", true},
    {DataType::i64, 8, "int64", true},
    {DataType::u64, 8, "uint64", true},
}};

const TypeRow& row_of(DataType type) {
  for (const auto& row : kTypes)
    if (row.type == type) return row;
  return kTypes[0];
}

}  // namespace

std::optional<DataType> data_type_from_envi_code(long code) {
  for (const auto& row : kTypes)
    if (static_cast<long>(row.type) == code) return row.type;
  return std::nullopt;
}

std::size_t bytes_per_sample(DataType type) { return row_of(type).bytes; }
std::string_view data_type_name(DataType type) { return row_of(type).name; }
bool is_integer(DataType type) { return row_of(type).integer; }

std::optional<DataType> data_type_from_name(std::string_view name) {
  for (const auto& row : kTypes)
    if (row.name == name) return row.type;
  return std::nullopt;
}

std::string_view interleave_name(Interleave interleave) {
  switch (interleave) {
    case Interleave::bsq: return "bsq";
    case Interleave::bil: return "bil";
    case Interleave::bip: return "bip";
  }
  return "bip";
}

std::optional<Interleave> interleave_from_name(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "bsq") return Interleave::bsq;
  if (lower == "bil") return Interleave::bil;
  if (lower == "bip") return Interleave::bip;
  return std::nullopt;
}

ByteOrder native_byte_order() {
  return std::endian::native == std::endian::big ? ByteOrder::big : ByteOrder::little;
}

}  // namespace hb
