// ENVI's scaling keys, which travel untouched in Metadata::extra (so ENVI -> HDF5 ->
// ENVI keeps them verbatim) and are interpreted here into Metadata::scaling:
// `data gain values` and `data offset values` (physical = gain x stored + offset, one
// per band) and `reflectance scale factor` (physical = stored / factor).
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "io/envi_header.hpp"
#include "io/envi_header_lex.hpp"

namespace hb::io {
namespace {

const std::string* extra_value(const Metadata& meta, std::string_view key) {
  for (const auto& [name, value] : meta.extra)
    if (name == key) return &value;
  return nullptr;
}

// The numbers of a "{a, b, ...}" or plain value; an error names the header and key.
Result<std::vector<double>> numbers(const std::string& raw, std::string_view key, const std::string& file) {
  std::string_view text = envi::trim(raw);
  const bool braced = text.size() >= 2 && text.front() == '{' && text.back() == '}';
  if (braced) text = text.substr(1, text.size() - 2);
  std::vector<double> values;
  for (;;) {
    const std::size_t comma = text.find(',');
    const std::string_view item = envi::trim(text.substr(0, comma));
    double value = 0;
    if (!envi::parse_double(item, value) || !std::isfinite(value))
      return bad_input(file, std::string(key),
                       "item " + std::to_string(values.size() + 1) + " is not a finite number");
    values.push_back(value);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return values;
}

Result<std::optional<std::vector<double>>> per_band(const Metadata& meta, std::string_view key, std::int64_t bands,
                                                    const std::string& file) {
  const std::string* raw = extra_value(meta, key);
  if (raw == nullptr) return std::optional<std::vector<double>>{};
  auto values = numbers(*raw, key, file);
  if (!values) return values.error();
  if (static_cast<std::int64_t>(values->size()) != bands)
    return bad_input(file, std::string(key), "has " + std::to_string(values->size()) + " items but bands = " +
                                                 std::to_string(bands));
  return std::optional(std::move(*values));
}

Status gain_and_offset(const Metadata& meta, std::int64_t bands, const std::string& file, Scaling& scaling) {
  auto gain = per_band(meta, "data gain values", bands, file);
  if (!gain) return gain.error();
  auto offset = per_band(meta, "data offset values", bands, file);
  if (!offset) return offset.error();
  if (!gain->has_value() && !offset->has_value()) return {};
  const auto count = static_cast<std::size_t>(bands);
  scaling.gain = gain->value_or(std::vector<double>(count, 1.0));
  scaling.offset = offset->value_or(std::vector<double>(count, 0.0));
  scaling.source = gain->has_value() ? "ENVI header 'data gain values'" : "ENVI header 'data offset values'";
  return {};
}

Status reflectance_factor(const Metadata& meta, std::int64_t bands, const std::string& file, Scaling& scaling) {
  const std::string* raw = extra_value(meta, "reflectance scale factor");
  if (raw == nullptr) return {};
  auto values = numbers(*raw, "reflectance scale factor", file);
  if (!values) return values.error();
  if (values->size() != 1 || (*values)[0] == 0)
    return bad_input(file, "reflectance scale factor", "must be one non-zero number");
  const auto count = static_cast<std::size_t>(bands);
  scaling.gain.assign(count, 1.0 / (*values)[0]);
  scaling.offset.assign(count, 0.0);
  scaling.units = "reflectance";
  scaling.source = "ENVI header 'reflectance scale factor'";
  return {};
}

}  // namespace

Status read_envi_scaling(Metadata& meta, std::int64_t bands, const std::string& file) {
  Scaling scaling;
  HB_TRY(gain_and_offset(meta, bands, file, scaling));
  if (!scaling.applies()) HB_TRY(reflectance_factor(meta, bands, file, scaling));
  if (scaling.applies()) meta.scaling = std::move(scaling);
  return {};
}

}  // namespace hb::io
