// hyperbatch info SCENE [--json]: what a scene is, read from its header or attributes.
#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "io/cube.hpp"
#include "src/cli/commands.hpp"

namespace hb::cli {
namespace {

struct InfoOptions {
  std::string scene;
  bool json = false;
};

// The scaling that applies (commands read physical = gain x stored + offset unless
// --units raw) and the product georeference carried through.
void describe_product(const io::Metadata& meta, nlohmann::json& j) {
  if (meta.scaling.applies())  // absent: the stored numbers are the values
    j["scaling"] = {{"source", meta.scaling.source}, {"units", meta.scaling.units},
                    {"gain", meta.scaling.gain}, {"offset", meta.scaling.offset}};
  if (!meta.geotransform.empty()) j["geotransform"] = meta.geotransform;
  if (!meta.spatial_ref.empty()) j["spatial_ref"] = meta.spatial_ref;
  if (!meta.geolocation.empty()) j["geolocation"] = meta.geolocation;
}

nlohmann::json describe(const io::Cube& cube) {
  const auto& info = cube.info();
  const auto& meta = info.meta;
  nlohmann::json j;
  j["path"] = cube.path();
  j["format"] = cube.format() == io::CubeFormat::hdf5 ? "hdf5" : "envi";
  j["file_type"] = meta.file_type;
  j["lines"] = info.shape.lines;
  j["samples"] = info.shape.samples;
  j["bands"] = info.shape.bands;
  j["data_type"] = data_type_name(info.type);
  j["data_type_code"] = static_cast<int>(info.type);
  j["bytes_on_disk"] = cube.bytes_on_disk();
  if (cube.format() == io::CubeFormat::envi) {
    j["interleave"] = interleave_name(meta.envi_interleave.value_or(Interleave::bsq));
    j["byte_order"] = static_cast<int>(meta.envi_byte_order.value_or(ByteOrder::little));
  }
  j["data_ignore_value"] = meta.data_ignore_value ? nlohmann::json(*meta.data_ignore_value) : nlohmann::json();
  std::vector<std::int64_t> bad;
  for (std::int64_t b = 0; b < static_cast<std::int64_t>(meta.bbl.size()); ++b)
    if (!meta.band_is_good(b)) bad.push_back(b);
  j["bad_bands"] = bad;  // zero-based band indices
  if (!meta.wavelength.empty()) {
    auto [lo, hi] = std::minmax_element(meta.wavelength.begin(), meta.wavelength.end());
    j["wavelength_range"] = {*lo, *hi};
  } else {
    j["wavelength_range"] = nullptr;
  }
  j["wavelength_units"] = meta.wavelength_units;
  j["description"] = meta.description;
  j["map_info"] = meta.map_info;
  if (meta.classes) j["classes"] = *meta.classes;
  if (!meta.class_names.empty()) j["class_names"] = meta.class_names;
  if (!meta.spectra_names.empty()) j["spectra"] = meta.spectra_names.size();
  describe_product(meta, j);
  return j;
}

void print_text(const nlohmann::json& j) {
  fmt::print("{}\n", j["path"].get<std::string>());
  fmt::print("  format          {} ({})\n", j["format"].get<std::string>(), j["file_type"].get<std::string>());
  fmt::print("  dimensions      {} lines x {} samples x {} bands\n", j["lines"].get<long long>(),
             j["samples"].get<long long>(), j["bands"].get<long long>());
  fmt::print("  data type       {}\n", j["data_type"].get<std::string>());
  if (j.contains("interleave"))
    fmt::print("  interleave      {}, byte order {}\n", j["interleave"].get<std::string>(),
               j["byte_order"].get<int>());
  if (j["wavelength_range"].is_array())
    fmt::print("  wavelengths     {} to {} {}\n", j["wavelength_range"][0].get<double>(),
               j["wavelength_range"][1].get<double>(), j["wavelength_units"].get<std::string>());
  else
    fmt::print("  wavelengths     not recorded\n");
  fmt::print("  ignore value    {}\n", j["data_ignore_value"].is_null() ? std::string("none")
                                                                        : j["data_ignore_value"].dump());
  fmt::print("  bad bands       {}\n", j["bad_bands"].empty() ? std::string("none") : j["bad_bands"].dump());
  if (j.contains("scaling"))
    fmt::print("  scaling         physical = gain x stored + offset, from {}{}\n",
               j["scaling"]["source"].get<std::string>(),
               j["scaling"]["units"].get<std::string>().empty() ? "" : " (" + j["scaling"]["units"].get<std::string>() + ")");
  else
    fmt::print("  scaling         none (the stored numbers are the values)\n");
  if (j.contains("geotransform")) fmt::print("  geotransform    {}\n", j["geotransform"].dump());
  if (j.contains("spatial_ref")) fmt::print("  spatial ref     {}\n", j["spatial_ref"].get<std::string>());
  if (j.contains("classes")) fmt::print("  classes         {}\n", j["classes"].get<int>());
  if (j.contains("spectra")) fmt::print("  spectra         {}\n", j["spectra"].get<std::size_t>());
  fmt::print("  size on disk    {} bytes\n", j["bytes_on_disk"].get<long long>());
}

}  // namespace

Registered register_info(CLI::App& root) {
  auto options = std::make_shared<InfoOptions>();
  auto* app = root.add_subcommand("info", "Describe a scene: dimensions, type, layout, wavelengths, no-data");
  app->add_option("scene", options->scene, "ENVI header/data file or HDF5 cube")->required();
  app->add_flag("--json", options->json, "Machine-readable output");
  return {app, [options]() -> Status {
            auto cube = io::open_stored_cube(options->scene);
            if (!cube) return cube.error();
            auto j = describe(**cube);
            if (options->json)
              fmt::print("{}\n", j.dump(2));
            else
              print_text(j);
            return {};
          }};
}

}  // namespace hb::cli
