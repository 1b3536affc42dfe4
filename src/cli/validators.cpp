#include "src/cli/validators.hpp"

#include <fmt/core.h>
#include <sys/stat.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "io/file_identity.hpp"
#include "io/mask.hpp"
#include "io/units.hpp"

namespace hb::cli::accepts {
namespace {

template <class T>
bool parse_whole(const std::string& text, T& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc{} && ptr == end;
}

bool parse_number(const std::string& text, double& value) {
  if (text.empty()) return false;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(value);
}

std::string got(const std::string& value) { return ", got '" + value + "'"; }

}  // namespace

CLI::Validator integer_in(std::int64_t lo, std::int64_t hi, const std::string& what) {
  const std::string accepted = !what.empty() ? what
                               : hi == kInt64Max ? fmt::format("an integer >= {}", lo)
                                                 : fmt::format("an integer from {} to {}", lo, hi);
  const std::string bound = hi == kInt64Max ? "" : fmt::format(" up to {}", hi);
  return CLI::Validator(
      [=](std::string& value) -> std::string {
        std::int64_t n = 0;
        if (parse_whole(value, n) && n >= lo && n <= hi) return {};
        return "must be " + accepted + (what.empty() ? "" : bound) + got(value);
      },
      "INT", "integer_in");
}

CLI::Validator unsigned_integer() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        std::uint64_t n = 0;
        return parse_whole(value, n) ? std::string() : "must be an integer from 0 to 2^64-1" + got(value);
      },
      "UINT", "unsigned_integer");
}

CLI::Validator number_in(double lo, double hi) {
  return CLI::Validator(
      [=](std::string& value) -> std::string {
        double x = 0.0;
        if (parse_number(value, x) && x >= lo && x <= hi) return {};
        return fmt::format("must be a number from {} to {}", lo, hi) + got(value);
      },
      "FLOAT", "number_in");
}

CLI::Validator any_number() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        double x = 0.0;
        return parse_number(value, x) ? std::string() : "must be a finite number" + got(value);
      },
      "FLOAT", "any_number");
}

CLI::Validator one_of(std::vector<std::string> names) {
  std::string list;
  for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
  return CLI::Validator(
      [names, list](std::string& value) -> std::string {
        for (const auto& name : names)
          if (value == name) return {};
        return "must be one of " + list + got(value);
      },
      "{" + list + "}", "one_of");
}

CLI::Validator existing_file() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        struct stat st {};
        if (::stat(value.c_str(), &st) != 0) return "no such file '" + value + "'";
        if (S_ISDIR(st.st_mode)) return "'" + value + "' is not a regular file (a directory)";
        return {};
      },
      "FILE", "existing_file");
}

}  // namespace hb::cli::accepts

namespace hb::cli {

CLI::Option* add_units_option(CLI::App& app, std::string& units, const std::string& help) {
  return app.add_option("--units", units, help)->check(accepts::one_of({"physical", "raw"}));
}

void use_units(const std::string& units) { io::set_scene_units(io::units_from_name(units).value_or(io::Units::physical)); }

}  // namespace hb::cli

namespace hb::cli {

void add_mask_options(CLI::App& app, MaskOptions& mask) {
  auto* raster = app.add_option("--mask", mask.raster,
                                "Exclude pixels: a raster of the scene's shape (nonzero = exclude) or an EMIT mask granule")
                     ->check(accepts::existing_file());
  app.add_option("--mask-bands", mask.bands,
                 "With an EMIT mask granule: the flag bands that exclude, comma-separated (default: Aggregate Flag)")
      ->needs(raster);
}

Status use_mask(const std::string& scene, const MaskOptions& mask, const std::string& output) {
  io::FilePlan plan;
  plan.read_cube("--mask", mask.raster);
  plan.write_cube("-o", output);
  HB_TRY(plan.check());
  io::MaskSpec spec{mask.raster, {}};
  std::size_t at = 0;
  while (!mask.bands.empty() && at <= mask.bands.size()) {
    const std::size_t comma = std::min(mask.bands.find(',', at), mask.bands.size());
    if (comma > at) spec.bands.push_back(mask.bands.substr(at, comma - at));
    at = comma + 1;
  }
  io::set_scene_mask(scene, std::move(spec));
  return {};
}

}  // namespace hb::cli
