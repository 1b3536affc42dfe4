// Typed attributes on one HDF5 object, written the way h5py writes them (variable-length
// UTF-8 strings, float64 and int32 arrays) and read leniently the way h5py users write
// them (fixed or variable-length strings, any integer width, scalars for 1-element
// lists). A type or size mismatch is bad_input naming the attribute.
#pragma once

#include <hdf5.h>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/error.hpp"

namespace hb::io::h5 {

class Attributes {
 public:
  // `owner` names the object in messages ("/cube", "/").
  Attributes(hid_t object, std::string file, std::string owner)
      : object_(object), file_(std::move(file)), owner_(std::move(owner)) {}

  Status put(const char* name, std::string_view value) const;
  Status put(const char* name, const std::vector<std::string>& values) const;
  Status put(const char* name, std::span<const double> values) const;
  Status put(const char* name, std::span<const int> values) const;
  Status put_scalar(const char* name, double value) const;
  Status put_scalar(const char* name, int value) const;

  // nullopt when the attribute is absent.
  Result<std::optional<std::string>> get_string(const char* name) const;
  Result<std::optional<std::vector<std::string>>> get_strings(const char* name) const;
  Result<std::optional<std::vector<double>>> get_doubles(const char* name) const;
  Result<std::optional<std::vector<int>>> get_ints(const char* name) const;
  Result<std::optional<double>> get_double(const char* name) const;  // exactly one value
  Result<std::optional<int>> get_int(const char* name) const;        // exactly one value

  Error mismatch(const char* name, const std::string& message) const;

 private:
  Status put_numbers(const char* name, hid_t file_type, hid_t memory_type, const void* data,
                     std::size_t count, bool scalar) const;
  Error failure(const char* name, const std::string& what) const;

  hid_t object_;
  std::string file_;
  std::string owner_;
};

}  // namespace hb::io::h5
