#include "io/band_match.hpp"

#include <fmt/core.h>

#include <cctype>
#include <cmath>
#include <optional>

#include "io/cube.hpp"
#include "io/units.hpp"

namespace hb::io {
namespace {

struct Bands {
  std::int64_t count = 0;
  std::vector<double> centres_nm;  // empty when the scene does not record them
  std::string units;               // what the numbers a command reads are
};

double to_nm(double value, const std::string& units) {
  std::string u;
  for (char c : units) u += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (u == "micrometers" || u == "micrometer" || u == "um" || u == "microns") return value * 1000.0;
  return value;
}

Result<Bands> bands_of(const std::string& path) {
  auto cube = open_stored_cube(path);
  if (!cube) return cube.error();
  const auto& info = (*cube)->info();
  Bands b;
  b.count = info.shape.bands;
  for (double w : info.meta.wavelength) b.centres_nm.push_back(to_nm(w, info.meta.wavelength_units));
  const auto& scaling = info.meta.scaling;
  if (!scaling.applies())
    b.units = "as stored (no scaling)";
  else if (scene_units() == Units::raw)
    b.units = "raw numbers of a scaled scene";
  else
    b.units = scaling.units.empty() ? "physical (units not named)" : scaling.units;
  return b;
}

Status compare_units(const Bands& a, const std::string& a_path, const Bands& b, const std::string& b_path) {
  if (a.units == b.units) return {};
  return bad_input(b_path, "units",
                   fmt::format("is in {}, {} in {}: scenes combined into one result need the same units", b.units, a_path,
                               a.units));
}

Status compare(const Bands& a, const std::string& a_path, const Bands& b, const std::string& b_path) {
  auto differ = [&](const char* field, const std::string& what) {
    return bad_input(b_path, field,
                     what + ": scenes combined into one result need the same bands (or --resample-to SCENE, "
                            "[mnf] resample_to in a job)");
  };
  if (a.count != b.count) return differ("wavelength", fmt::format("has {} bands, {} has {}", b.count, a_path, a.count));
  if (a.centres_nm.empty() != b.centres_nm.empty())
    return differ("wavelength", fmt::format("records {} band centres, {} does{}", b.centres_nm.empty() ? "no" : "its",
                                            a_path, a.centres_nm.empty() ? " not" : ""));
  for (std::size_t i = 0; i < a.centres_nm.size(); ++i)
    if (std::abs(a.centres_nm[i] - b.centres_nm[i]) > kSameBandCentreNm)
      return differ("wavelength", fmt::format("band {} is centred at {} nm, in {} at {} nm (more than {} nm apart)", i,
                                              b.centres_nm[i], a_path, a.centres_nm[i], kSameBandCentreNm));
  return compare_units(a, a_path, b, b_path);
}

using Comparison = Status (*)(const Bands&, const std::string&, const Bands&, const std::string&);

Status check_scenes(const std::vector<std::string>& scenes, Comparison compare) {
  // A scene that does not open is left to the pass that reads it (on the rank that
  // owns it), which reports it as it always has.
  std::optional<Bands> first;
  std::string first_path;
  for (const auto& path : scenes) {
    auto bands = bands_of(path);
    if (!bands) continue;
    if (!first) {
      first = std::move(*bands);
      first_path = path;
      continue;
    }
    HB_TRY(compare(*first, first_path, *bands, path));
  }
  return {};
}

}  // namespace

Status check_same_bands(const std::vector<std::string>& scenes) { return check_scenes(scenes, compare); }

Status check_same_units(const std::vector<std::string>& scenes) { return check_scenes(scenes, compare_units); }

}  // namespace hb::io
