// Option checks whose failures read "--OPTION: must be ..., got X": each names what the
// option accepts, and each rejects a value before CLI11 tries to convert it, so no
// option fails with a conversion message instead.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "src/base/error.hpp"

namespace hb::cli::accepts {

inline constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
inline constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// Integers from `lo` to `hi`; `what` says it in words ("a positive integer").
CLI::Validator integer_in(std::int64_t lo, std::int64_t hi, const std::string& what = "");
inline CLI::Validator positive_integer(std::int64_t hi = kInt64Max) { return integer_in(1, hi, "a positive integer"); }
inline CLI::Validator non_negative_integer(std::int64_t hi = kInt64Max) {
  return integer_in(0, hi, "a non-negative integer");
}
CLI::Validator unsigned_integer();  // any value of a std::uint64_t (seeds)

// Finite numbers from `lo` to `hi`.
CLI::Validator number_in(double lo, double hi);
CLI::Validator any_number();

CLI::Validator one_of(std::vector<std::string> names);
CLI::Validator existing_file();

}  // namespace hb::cli::accepts

namespace hb::cli {

// --units physical|raw: the numbers a command works in (io/units.hpp); use_units()
// makes the choice the process's scene units before the command opens anything.
CLI::Option* add_units_option(CLI::App& app, std::string& units, const std::string& help);
void use_units(const std::string& units);

// --mask RASTER and --mask-bands NAME,NAME (io/mask.hpp); use_mask() registers them for
// `scene` before the command opens it.
struct MaskOptions {
  std::string raster;
  std::string bands;
};
void add_mask_options(CLI::App& app, MaskOptions& mask);
// Also refuses (usage error) an output -o that is the mask itself.
Status use_mask(const std::string& scene, const MaskOptions& mask, const std::string& output);

}  // namespace hb::cli
