// libFuzzer entry point for the ENVI header parser. Any input must parse or fail
// cleanly; whatever parses must format to a header that parses again to the same
// cube, and formatting that again must give the same text (a fixed point).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "io/envi_header.hpp"

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_envi_header: %s\n%s\n", what, detail.c_str());
  std::abort();
}

// The first property that differs between the two headers, or nullptr.
const char* difference(const hb::io::EnviHeader& a, const hb::io::EnviHeader& b) {
  const auto& ma = a.info.meta;
  const auto& mb = b.info.meta;
  if (!(a.info.shape == b.info.shape)) return "shape";
  if (a.info.type != b.info.type) return "data type";
  if (a.interleave != b.interleave || a.byte_order != b.byte_order) return "interleave or byte order";
  if (a.header_offset != b.header_offset) return "header offset";
  if (ma.file_type != mb.file_type) return "file type";
  if (ma.wavelength.size() != mb.wavelength.size() || ma.fwhm.size() != mb.fwhm.size()) return "wavelength/fwhm";
  if (ma.bbl != mb.bbl) return "bbl";
  if (ma.band_names.size() != mb.band_names.size()) return "band names";
  if (ma.classes != mb.classes || ma.class_lookup != mb.class_lookup) return "classes";
  if (ma.class_names.size() != mb.class_names.size()) return "class names";
  if (ma.spectra_names.size() != mb.spectra_names.size()) return "spectra names";
  if (ma.extra.size() != mb.extra.size()) return "extra keys";
  return nullptr;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = hb::io::parse_envi_header(text, "fuzz.hdr");
  if (!parsed.ok()) {
    const auto& error = parsed.error();
    if (error.kind != hb::ErrorKind::bad_input || error.file != "fuzz.hdr" || error.message.empty())
      fail("a failed parse must be a bad_input error naming the file", error.line());
    return 0;
  }
  const std::string formatted = hb::io::format_envi_header(*parsed);
  auto again = hb::io::parse_envi_header(formatted, "fuzz.hdr");
  if (!again.ok()) fail(("formatted header does not parse: " + again.error().line()).c_str(), formatted);
  if (const char* what = difference(*parsed, *again))
    fail(("formatted header differs in " + std::string(what)).c_str(), formatted);
  if (hb::io::format_envi_header(*again) != formatted) fail("formatting is not a fixed point", formatted);
  return 0;
}
