#include "io/hdf5_attributes.hpp"

#include <cstdint>
#include <limits>

#include "io/hdf5_handle.hpp"

namespace hb::io::h5 {
namespace {

std::string class_name(H5T_class_t type_class) {
  switch (type_class) {
    case H5T_INTEGER: return "integer";
    case H5T_FLOAT: return "float";
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "compound";
    case H5T_ENUM: return "enum";
    case H5T_ARRAY: return "array";
    case H5T_VLEN: return "vlen";
    default: return "non-numeric";
  }
}

Datatype utf8_string_type() {
  Datatype type(H5Tcopy(H5T_C_S1));
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  return type;
}

// Fixed-length strings: cut at the padding the type declares.
std::string unpad(const char* data, std::size_t size, H5T_str_t pad) {
  std::string value(data, size);
  if (pad == H5T_STR_SPACEPAD) {
    value.erase(value.find_last_not_of(' ') + 1);
  } else if (auto nul = value.find('\0'); nul != std::string::npos) {
    value.resize(nul);
  }
  return value;
}

// An open attribute with its type and element count.
struct OpenAttribute {
  Attribute attribute;
  Datatype type;
  Dataspace space;
  std::size_t count = 0;
};

}  // namespace

Error Attributes::mismatch(const char* name, const std::string& message) const {
  return bad_input(file_, name, "attribute of " + owner_ + ": " + message);
}

Error Attributes::failure(const char* name, const std::string& what) const {
  return Error{ErrorKind::io, file_, name,
               "cannot " + what + " attribute of " + owner_ + ": " + hdf5_error_detail()};
}

Status Attributes::put(const char* name, std::string_view value) const {
  const std::string text(value);
  const char* pointer = text.c_str();
  Datatype type = utf8_string_type();
  Dataspace space(H5Screate(H5S_SCALAR));
  Attribute attribute(H5Acreate2(object_, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attribute || H5Awrite(attribute.get(), type.get(), &pointer) < 0) return failure(name, "write");
  return {};
}

Status Attributes::put(const char* name, const std::vector<std::string>& values) const {
  std::vector<const char*> pointers;
  pointers.reserve(values.size());
  for (const auto& value : values) pointers.push_back(value.c_str());
  Datatype type = utf8_string_type();
  const hsize_t count = values.size();
  Dataspace space(H5Screate_simple(1, &count, nullptr));
  Attribute attribute(H5Acreate2(object_, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attribute || H5Awrite(attribute.get(), type.get(), pointers.data()) < 0)
    return failure(name, "write");
  return {};
}

Status Attributes::put_numbers(const char* name, hid_t stored_type, hid_t memory_type,
                               const void* data, std::size_t count, bool scalar) const {
  const hsize_t dims = count;
  Dataspace space(scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dims, nullptr));
  Attribute attribute(H5Acreate2(object_, name, stored_type, space.get(), H5P_DEFAULT, H5P_DEFAULT));
  if (!attribute || H5Awrite(attribute.get(), memory_type, data) < 0) return failure(name, "write");
  return {};
}

Status Attributes::put(const char* name, std::span<const double> values) const {
  return put_numbers(name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, values.data(), values.size(), false);
}

Status Attributes::put(const char* name, std::span<const int> values) const {
  return put_numbers(name, H5T_STD_I32LE, H5T_NATIVE_INT, values.data(), values.size(), false);
}

Status Attributes::put_scalar(const char* name, double value) const {
  return put_numbers(name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, 1, true);
}

Status Attributes::put_scalar(const char* name, int value) const {
  return put_numbers(name, H5T_STD_I32LE, H5T_NATIVE_INT, &value, 1, true);
}

namespace {

// Opens `name` on `object` if present; checks it is a scalar or a 1-D list.
Result<std::optional<OpenAttribute>> open_attribute(hid_t object, const char* name,
                                                    const Attributes& where) {
  const htri_t exists = H5Aexists(object, name);
  if (exists == 0) return std::optional<OpenAttribute>{};
  OpenAttribute open;
  if (exists > 0) open.attribute = Attribute(H5Aopen(object, name, H5P_DEFAULT));
  if (!open.attribute) return where.mismatch(name, "cannot be opened: " + hdf5_error_detail());
  open.type = Datatype(H5Aget_type(open.attribute.get()));
  open.space = Dataspace(H5Aget_space(open.attribute.get()));
  const int rank = H5Sget_simple_extent_ndims(open.space.get());
  const hssize_t count = H5Sget_simple_extent_npoints(open.space.get());
  if (!open.type || rank < 0 || count < 0)
    return where.mismatch(name, "unreadable: " + hdf5_error_detail());
  if (rank > 1) return where.mismatch(name, "expected a scalar or a 1-D list, found rank " +
                                                std::to_string(rank));
  open.count = static_cast<std::size_t>(count);
  return std::optional<OpenAttribute>(std::move(open));
}

}  // namespace

Result<std::optional<std::vector<std::string>>> Attributes::get_strings(const char* name) const {
  auto opened = open_attribute(object_, name, *this);
  if (!opened) return opened.error();
  if (!opened->has_value()) return std::optional<std::vector<std::string>>{};
  OpenAttribute& open = **opened;
  const H5T_class_t type_class = H5Tget_class(open.type.get());
  if (type_class != H5T_STRING)
    return mismatch(name, "expected strings, found " + class_name(type_class));

  std::vector<std::string> values;
  values.reserve(open.count);
  if (H5Tis_variable_str(open.type.get()) > 0) {
    Datatype memory = utf8_string_type();
    H5Tset_cset(memory.get(), H5Tget_cset(open.type.get()));
    std::vector<char*> pointers(open.count, nullptr);
    if (H5Aread(open.attribute.get(), memory.get(), pointers.data()) < 0) return failure(name, "read");
    for (const char* pointer : pointers) values.emplace_back(pointer != nullptr ? pointer : "");
    H5Dvlen_reclaim(memory.get(), open.space.get(), H5P_DEFAULT, pointers.data());
  } else {
    const std::size_t size = H5Tget_size(open.type.get());
    std::vector<char> buffer(open.count * size + 1);
    if (H5Aread(open.attribute.get(), open.type.get(), buffer.data()) < 0) return failure(name, "read");
    const H5T_str_t pad = H5Tget_strpad(open.type.get());
    for (std::size_t i = 0; i < open.count; ++i) values.push_back(unpad(&buffer[i * size], size, pad));
  }
  return std::optional(std::move(values));
}

Result<std::optional<std::vector<double>>> Attributes::get_doubles(const char* name) const {
  auto opened = open_attribute(object_, name, *this);
  if (!opened) return opened.error();
  if (!opened->has_value()) return std::optional<std::vector<double>>{};
  OpenAttribute& open = **opened;
  const H5T_class_t type_class = H5Tget_class(open.type.get());
  if (type_class != H5T_FLOAT && type_class != H5T_INTEGER)
    return mismatch(name, "expected numbers, found " + class_name(type_class));
  std::vector<double> values(open.count);
  if (H5Aread(open.attribute.get(), H5T_NATIVE_DOUBLE, values.data()) < 0) return failure(name, "read");
  return std::optional(std::move(values));
}

Result<std::optional<std::vector<int>>> Attributes::get_ints(const char* name) const {
  auto opened = open_attribute(object_, name, *this);
  if (!opened) return opened.error();
  if (!opened->has_value()) return std::optional<std::vector<int>>{};
  OpenAttribute& open = **opened;
  const H5T_class_t type_class = H5Tget_class(open.type.get());
  if (type_class != H5T_INTEGER)
    return mismatch(name, "expected integers, found " + class_name(type_class));
  // Read wide (h5py writes Python ints as int64), then check each value fits an int.
  std::vector<std::int64_t> wide(open.count);
  if (H5Aread(open.attribute.get(), H5T_NATIVE_INT64, wide.data()) < 0) return failure(name, "read");
  std::vector<int> values;
  values.reserve(wide.size());
  for (std::int64_t value : wide) {
    if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max())
      return mismatch(name, "value " + std::to_string(value) + " does not fit a 32-bit integer");
    values.push_back(static_cast<int>(value));
  }
  return std::optional(std::move(values));
}

namespace {

template <class T>
Result<std::optional<T>> only_value(Result<std::optional<std::vector<T>>> list, const char* name,
                                    const Attributes& where) {
  if (!list) return list.error();
  if (!list->has_value()) return std::optional<T>{};
  if ((*list)->size() != 1)
    return where.mismatch(name, "expected one value, found " + std::to_string((*list)->size()));
  return std::optional<T>(std::move((**list)[0]));
}

}  // namespace

Result<std::optional<std::string>> Attributes::get_string(const char* name) const {
  return only_value(get_strings(name), name, *this);
}

Result<std::optional<double>> Attributes::get_double(const char* name) const {
  return only_value(get_doubles(name), name, *this);
}

Result<std::optional<int>> Attributes::get_int(const char* name) const {
  return only_value(get_ints(name), name, *this);
}

}  // namespace hb::io::h5
