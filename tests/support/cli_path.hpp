// The hyperbatch binary the CLI tests run: the one built beside them (HB_CLI), or, on
// the device, where the bundle (bench/make_bundle) puts every binary in one folder,
// the hyperbatch beside the test binary. Empty when neither exists.
#pragma once

#include <filesystem>
#include <string>

namespace hb::test {

inline std::string cli_path() {
  if (std::filesystem::exists(HB_CLI)) return HB_CLI;
  const auto beside = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "hyperbatch";
  return std::filesystem::exists(beside) ? beside.string() : std::string();
}

}  // namespace hb::test
