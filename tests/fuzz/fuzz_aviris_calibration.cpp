// libFuzzer entry point for the AVIRIS-Classic calibration parsers (.gain, .spc). The
// first byte picks the parser and the second the band count; the rest is the file.
// Any input must parse or fail cleanly, and what parses must hold one positive-width
// entry per band.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "io/aviris/aviris_parsers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const bool gain = (data[0] & 1) == 0;
  const std::int64_t bands = data[1];  // 0 included: refused cleanly
  const std::string_view text(reinterpret_cast<const char*>(data + 2), size - 2);
  if (gain) {
    auto factors = hb::io::aviris::parse_gain(text, bands, "fuzz.gain");
    if (factors && static_cast<std::int64_t>(factors->size()) != bands) {
      std::fprintf(stderr, "fuzz_aviris_calibration: %zu factors for %lld bands\n", factors->size(),
                   static_cast<long long>(bands));
      std::abort();
    }
    if (factors)
      for (double f : *factors)
        if (f == 0) std::abort();
  } else {
    auto spc = hb::io::aviris::parse_spc(text, bands, "fuzz.spc");
    if (spc && (static_cast<std::int64_t>(spc->centre_nm.size()) != bands || spc->fwhm_nm.size() != spc->centre_nm.size()))
      std::abort();
  }
  return 0;
}
