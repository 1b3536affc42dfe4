#include "io/emit/emit_metadata.hpp"

#include <array>
#include <optional>
#include <vector>

#include "io/hdf5_attributes.hpp"
#include "io/hdf5_handle.hpp"

namespace hb::io::emit {
namespace {

constexpr const char* kBandGroup = "/sensor_band_parameters";
constexpr std::array<const char*, 5> kLocation = {"lat", "lon", "elev", "glt_x", "glt_y"};

bool exists(hid_t file, const std::string& name) {
  // H5Lexists needs every parent to exist: check the path one component at a time.
  std::size_t at = 0;
  while ((at = name.find('/', at + 1)) != std::string::npos)
    if (H5Lexists(file, name.substr(0, at).c_str(), H5P_DEFAULT) <= 0) return false;
  return H5Lexists(file, name.c_str(), H5P_DEFAULT) > 0;
}

// Opens a 1-D dataset of `expected` elements; nullopt when absent.
Result<std::optional<h5::Dataset>> open_list(hid_t file, const std::string& name, std::int64_t expected,
                                             const std::string& path) {
  if (!exists(file, name)) return std::optional<h5::Dataset>{};
  h5::Dataset dataset(H5Dopen2(file, name.c_str(), H5P_DEFAULT));
  if (!dataset) return bad_input(path, name, "is not a dataset: " + h5::hdf5_error_detail());
  h5::Dataspace space(H5Dget_space(dataset.get()));
  const int rank = H5Sget_simple_extent_ndims(space.get());
  const hssize_t count = H5Sget_simple_extent_npoints(space.get());
  if (rank != 1) return bad_input(path, name, "expected a 1-D list, found rank " + std::to_string(rank));
  if (count != expected)
    return bad_input(path, name, "has " + std::to_string(count) + " items but the cube has " +
                                     std::to_string(expected) + " bands");
  return std::optional<h5::Dataset>(std::move(dataset));
}

Result<std::optional<std::vector<double>>> read_numbers(hid_t file, const std::string& name, std::int64_t bands,
                                                        const std::string& path) {
  auto dataset = open_list(file, name, bands, path);
  if (!dataset) return dataset.error();
  if (!dataset->has_value()) return std::optional<std::vector<double>>{};
  h5::Datatype type(H5Dget_type((*dataset)->get()));
  const H5T_class_t type_class = H5Tget_class(type.get());
  if (type_class != H5T_FLOAT && type_class != H5T_INTEGER) return bad_input(path, name, "expected numbers");
  std::vector<double> values(static_cast<std::size_t>(bands));
  if (H5Dread((*dataset)->get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
    return bad_input(path, name, "cannot be read: " + h5::hdf5_error_detail());
  return std::optional(std::move(values));
}

Result<std::optional<std::vector<std::string>>> read_strings(hid_t file, const std::string& name,
                                                             std::int64_t bands, const std::string& path) {
  auto dataset = open_list(file, name, bands, path);
  if (!dataset) return dataset.error();
  if (!dataset->has_value()) return std::optional<std::vector<std::string>>{};
  h5::Datatype type(H5Dget_type((*dataset)->get()));
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) <= 0)
    return bad_input(path, name, "expected variable-length strings");
  h5::Datatype memory(H5Tcopy(H5T_C_S1));
  H5Tset_size(memory.get(), H5T_VARIABLE);
  H5Tset_cset(memory.get(), H5Tget_cset(type.get()));
  std::vector<char*> pointers(static_cast<std::size_t>(bands), nullptr);
  if (H5Dread((*dataset)->get(), memory.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()) < 0)
    return bad_input(path, name, "cannot be read: " + h5::hdf5_error_detail());
  std::vector<std::string> values;
  for (const char* pointer : pointers) values.emplace_back(pointer != nullptr ? pointer : "");
  h5::Dataspace space(H5Dget_space((*dataset)->get()));
  H5Dvlen_reclaim(memory.get(), space.get(), H5P_DEFAULT, pointers.data());
  return std::optional(std::move(values));
}

std::string band_path(const char* name) { return std::string(kBandGroup) + "/" + name; }

Error missing(const std::string& path, const std::string& name) {
  return bad_input(path, name, "missing: an EMIT granule records it for every band");
}

Status read_spectral(hid_t file, std::int64_t bands, const std::string& path, Metadata& meta) {
  auto wavelengths = read_numbers(file, band_path("wavelengths"), bands, path);
  if (!wavelengths) return wavelengths.error();
  if (!wavelengths->has_value()) return missing(path, band_path("wavelengths"));
  meta.wavelength = std::move(**wavelengths);
  meta.wavelength_units = "Nanometers";
  auto fwhm = read_numbers(file, band_path("fwhm"), bands, path);
  if (!fwhm) return fwhm.error();
  if (!fwhm->has_value()) return missing(path, band_path("fwhm"));
  meta.fwhm = std::move(**fwhm);
  auto good = read_numbers(file, band_path("good_wavelengths"), bands, path);
  if (!good) return good.error();
  if (good->has_value()) {
    for (double flag : **good) meta.bbl.push_back(flag != 0 ? 1 : 0);
  }
  return {};
}

Status read_mask_bands(hid_t file, std::int64_t bands, const std::string& path, Metadata& meta) {
  auto names = read_strings(file, band_path("mask_bands"), bands, path);
  if (!names) return names.error();
  if (!names->has_value()) return missing(path, band_path("mask_bands"));
  meta.band_names = std::move(**names);
  return {};
}

Status read_georeference(hid_t file, const std::string& path, Metadata& meta) {
  const h5::Attributes global(file, path, "/");
  auto geotransform = global.get_doubles("geotransform");
  if (!geotransform) return geotransform.error();
  if (geotransform->has_value()) {
    if ((*geotransform)->size() != 6)
      return global.mismatch("geotransform", "expected 6 numbers, found " + std::to_string((*geotransform)->size()));
    meta.geotransform = std::move(**geotransform);
  }
  auto spatial_ref = global.get_string("spatial_ref");
  if (!spatial_ref) return spatial_ref.error();
  meta.spatial_ref = spatial_ref->value_or("");
  for (const char* name : kLocation) {
    const std::string location = std::string("/location/") + name;
    if (exists(file, location)) meta.geolocation.push_back(location);
  }
  return {};
}

}  // namespace

Result<Metadata> read_granule_metadata(hid_t file, hid_t dataset, const std::string& variable, std::int64_t bands,
                                       const std::string& path) {
  Metadata meta;
  if (!exists(file, kBandGroup)) return missing(path, kBandGroup);
  if (variable == "mask")
    HB_TRY(read_mask_bands(file, bands, path, meta));
  else
    HB_TRY(read_spectral(file, bands, path, meta));
  const h5::Attributes attrs(dataset, path, "/" + variable);
  auto fill = attrs.get_double("_FillValue");
  if (!fill) return fill.error();
  meta.data_ignore_value = *fill;
  HB_TRY(read_georeference(file, path, meta));
  meta.description = "EMIT " + variable + " granule";
  return meta;
}

}  // namespace hb::io::emit
