#include "io/hdf5_metadata.hpp"

#include <span>
#include <type_traits>

#include "io/glt/map_grid.hpp"
#include "io/hdf5_attributes.hpp"

namespace hb::io::h5 {
namespace {

Status put_if_set(const Attributes& attrs, const char* name, const std::string& value) {
  if (value.empty()) return {};
  return attrs.put(name, value);
}

template <class T>
Status put_if_set(const Attributes& attrs, const char* name, const std::vector<T>& values) {
  if (values.empty()) return {};
  if constexpr (std::is_same_v<T, std::string>) {
    return attrs.put(name, values);
  } else {
    return attrs.put(name, std::span<const T>(values));
  }
}

// Copies an attribute into `field` when present; leaves the default otherwise.
template <class T>
Status take(Result<std::optional<T>> value, T& field) {
  if (!value) return value.error();
  if (value->has_value()) field = std::move(**value);
  return {};
}

template <class T>
Status take(Result<std::optional<T>> value, std::optional<T>& field) {
  if (!value) return value.error();
  field = std::move(*value);
  return {};
}

Status write_extra(const Attributes& attrs, const Metadata& meta) {
  if (meta.extra.empty()) return {};
  std::vector<std::string> keys, values;
  for (const auto& [key, value] : meta.extra) {
    keys.push_back(key);
    values.push_back(value);
  }
  HB_TRY(attrs.put("extra_keys", keys));
  return attrs.put("extra_values", values);
}

Status read_extra(const Attributes& attrs, Metadata& meta) {
  std::vector<std::string> keys, values;
  HB_TRY(take(attrs.get_strings("extra_keys"), keys));
  HB_TRY(take(attrs.get_strings("extra_values"), values));
  if (keys.size() != values.size())
    return attrs.mismatch("extra_values", std::to_string(values.size()) + " values for " +
                                              std::to_string(keys.size()) + " extra_keys");
  for (std::size_t i = 0; i < keys.size(); ++i) meta.extra.emplace_back(keys[i], values[i]);
  return {};
}

Status write_envi_layout(const Attributes& attrs, const Metadata& meta) {
  if (meta.envi_interleave) HB_TRY(attrs.put("envi_interleave", interleave_name(*meta.envi_interleave)));
  if (meta.envi_byte_order) HB_TRY(attrs.put_scalar("envi_byte_order", static_cast<int>(*meta.envi_byte_order)));
  return {};
}

Status read_envi_layout(const Attributes& attrs, Metadata& meta) {
  std::optional<std::string> interleave;
  HB_TRY(take(attrs.get_string("envi_interleave"), interleave));
  if (interleave) {
    meta.envi_interleave = interleave_from_name(*interleave);
    if (!meta.envi_interleave)
      return attrs.mismatch("envi_interleave", "'" + *interleave + "' is not bsq, bil or bip");
  }
  std::optional<int> byte_order;
  HB_TRY(take(attrs.get_int("envi_byte_order"), byte_order));
  if (byte_order) {
    if (*byte_order != 0 && *byte_order != 1)
      return attrs.mismatch("envi_byte_order", std::to_string(*byte_order) + " is not 0 or 1");
    meta.envi_byte_order = static_cast<ByteOrder>(*byte_order);
  }
  return {};
}

// A cube on a map grid carries GDAL's geotransform and WKT (docs/formats.md), taken
// from the ENVI map info when only that is known.
Status write_georeference(const Attributes& attrs, const Metadata& meta) {
  Metadata georef;
  georef.geotransform = meta.geotransform;
  georef.spatial_ref = meta.spatial_ref;
  georef.map_info = meta.map_info;
  georef.coordinate_system_string = meta.coordinate_system_string;
  complete_georeference(georef);
  if (georef.geotransform.size() != 6) return {};
  HB_TRY(attrs.put("geotransform", std::span<const double>(georef.geotransform)));
  return put_if_set(attrs, "spatial_ref", georef.spatial_ref);
}

bool scaling_from_envi_keys(const Metadata& meta) {
  for (const auto& [key, value] : meta.extra)
    if (key == "data gain values" || key == "data offset values" || key == "reflectance scale factor") return true;
  return false;
}

// Geolocation and scaling: attributes `geolocation`, `scaling_gain`, `scaling_offset`,
// `scaling_units`, `scaling_source`.
Status write_product_fields(const Attributes& attrs, const Metadata& meta) {
  HB_TRY(put_if_set(attrs, "geolocation", meta.geolocation));
  // A scaling read from ENVI keys travels in extra_keys and is read from them again.
  if (scaling_from_envi_keys(meta)) return {};
  HB_TRY(put_if_set(attrs, "scaling_gain", meta.scaling.gain));
  HB_TRY(put_if_set(attrs, "scaling_offset", meta.scaling.offset));
  HB_TRY(put_if_set(attrs, "scaling_units", meta.scaling.units));
  return put_if_set(attrs, "scaling_source", meta.scaling.source);
}

Status read_product_fields(const Attributes& attrs, Metadata& meta) {
  HB_TRY(take(attrs.get_strings("geolocation"), meta.geolocation));
  HB_TRY(take(attrs.get_doubles("scaling_gain"), meta.scaling.gain));
  HB_TRY(take(attrs.get_doubles("scaling_offset"), meta.scaling.offset));
  HB_TRY(take(attrs.get_string("scaling_units"), meta.scaling.units));
  HB_TRY(take(attrs.get_string("scaling_source"), meta.scaling.source));
  if (meta.scaling.offset.size() != meta.scaling.gain.size())
    return attrs.mismatch("scaling_offset", std::to_string(meta.scaling.offset.size()) + " values for " +
                                                std::to_string(meta.scaling.gain.size()) + " scaling_gain");
  return {};
}

}  // namespace

Status write_metadata(hid_t cube, const Metadata& meta, const std::string& file) {
  const Attributes attrs(cube, file, "/cube");
  HB_TRY(put_if_set(attrs, "description", meta.description));
  HB_TRY(attrs.put("file_type", meta.file_type));
  HB_TRY(put_if_set(attrs, "wavelength", meta.wavelength));
  HB_TRY(put_if_set(attrs, "fwhm", meta.fwhm));
  HB_TRY(put_if_set(attrs, "wavelength_units", meta.wavelength_units));
  if (meta.data_ignore_value) HB_TRY(attrs.put_scalar("data_ignore_value", *meta.data_ignore_value));
  HB_TRY(put_if_set(attrs, "bbl", meta.bbl));
  HB_TRY(put_if_set(attrs, "band_names", meta.band_names));
  HB_TRY(put_if_set(attrs, "map_info", meta.map_info));
  HB_TRY(put_if_set(attrs, "coordinate_system_string", meta.coordinate_system_string));
  if (meta.classes) HB_TRY(attrs.put_scalar("classes", *meta.classes));
  HB_TRY(put_if_set(attrs, "class_names", meta.class_names));
  HB_TRY(put_if_set(attrs, "class_lookup", meta.class_lookup));
  HB_TRY(put_if_set(attrs, "spectra_names", meta.spectra_names));
  HB_TRY(write_extra(attrs, meta));
  HB_TRY(put_if_set(attrs, "source_file", meta.source_file));
  HB_TRY(write_georeference(attrs, meta));
  HB_TRY(write_product_fields(attrs, meta));
  return write_envi_layout(attrs, meta);
}

Result<Metadata> read_metadata(hid_t cube, const std::string& file) {
  const Attributes attrs(cube, file, "/cube");
  Metadata meta;
  HB_TRY(take(attrs.get_string("description"), meta.description));
  HB_TRY(take(attrs.get_string("file_type"), meta.file_type));
  HB_TRY(take(attrs.get_doubles("wavelength"), meta.wavelength));
  HB_TRY(take(attrs.get_doubles("fwhm"), meta.fwhm));
  HB_TRY(take(attrs.get_string("wavelength_units"), meta.wavelength_units));
  HB_TRY(take(attrs.get_double("data_ignore_value"), meta.data_ignore_value));
  HB_TRY(take(attrs.get_ints("bbl"), meta.bbl));
  HB_TRY(take(attrs.get_strings("band_names"), meta.band_names));
  HB_TRY(take(attrs.get_string("map_info"), meta.map_info));
  HB_TRY(take(attrs.get_string("coordinate_system_string"), meta.coordinate_system_string));
  HB_TRY(take(attrs.get_int("classes"), meta.classes));
  HB_TRY(take(attrs.get_strings("class_names"), meta.class_names));
  HB_TRY(take(attrs.get_ints("class_lookup"), meta.class_lookup));
  HB_TRY(take(attrs.get_strings("spectra_names"), meta.spectra_names));
  HB_TRY(read_extra(attrs, meta));
  HB_TRY(take(attrs.get_string("source_file"), meta.source_file));
  HB_TRY(take(attrs.get_doubles("geotransform"), meta.geotransform));
  HB_TRY(take(attrs.get_string("spatial_ref"), meta.spatial_ref));
  HB_TRY(read_envi_layout(attrs, meta));
  HB_TRY(read_product_fields(attrs, meta));
  return meta;
}

Status write_format_marker(hid_t root, const std::string& file) {
  const Attributes attrs(root, file, "/");
  HB_TRY(attrs.put("format", kFormatName));
  return attrs.put_scalar("format_version", kFormatVersion);
}

Status check_format_marker(hid_t root, const std::string& file) {
  const Attributes attrs(root, file, "/");
  auto name = attrs.get_string("format");
  if (!name) return name.error();
  if (name->has_value() && **name != kFormatName)
    return attrs.mismatch("format", "'" + **name + "' is not " + kFormatName);
  auto version = attrs.get_int("format_version");
  if (!version) return version.error();
  if (version->has_value() && (**version < 1 || **version > kFormatVersion))
    return attrs.mismatch("format_version", "version " + std::to_string(**version) +
                                                " is not supported (this build reads 1)");
  return {};
}

}  // namespace hb::io::h5
