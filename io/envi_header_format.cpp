// Writes ENVI header text that ENVI, GDAL and Spectral Python read back: one key per
// line, lists in braces wrapped over lines, numbers in their shortest exact form.
#include <charconv>
#include <cstdint>
#include <string>
#include <vector>

#include "io/envi_header.hpp"
#include "io/envi_header_lex.hpp"

namespace hb::io {
namespace {

constexpr std::size_t kLineWidth = 80;

// Shortest text that reads back to the same double.
std::string number(double value) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  return ec == std::errc{} ? std::string(buffer, end) : std::string("nan");
}
std::string number(std::int64_t value) { return std::to_string(value); }
std::string number(int value) { return std::to_string(value); }

// Header values live on one line (or inside one pair of braces): newlines would end
// them early, and a continuation line starting with ';' reads as a comment elsewhere.
std::string one_line(std::string_view text) {
  std::string out(envi::trim(text));
  for (char& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  return out;
}

// An unbraced value must not start a list.
std::string plain_value(std::string_view text) {
  std::string out = one_line(text);
  if (!out.empty() && out.front() == '{') out.front() = '(';
  return out;
}

// '}' ends a {...} value, so it cannot appear inside one.
std::string braced_text(std::string_view text) {
  std::string out = one_line(text);
  for (char& c : out)
    if (c == '}') c = ')';
  return out;
}

// Commas split list items; braces are replaced as well so that other readers, which
// look for '}' at the end of a line, agree on where the list ends.
std::string list_item(std::string_view text) {
  std::string out = braced_text(text);
  for (char& c : out) {
    if (c == ',') c = ';';
    if (c == '{') c = '(';
  }
  return out;
}

class HeaderWriter {
 public:
  void scalar(std::string_view key, const std::string& value) { out_ += std::string(key) + " = " + value + "\n"; }
  void braced(std::string_view key, std::string_view value) { scalar(key, "{" + braced_text(value) + "}"); }
  // A one-line name, braced only when it starts with '{' itself.
  void name(std::string_view key, std::string_view value) {
    const std::string text = one_line(value);
    if (!text.empty() && text.front() == '{')
      braced(key, text);
    else
      scalar(key, text);
  }

  // "key = {\n  a, b, c,\n  d}" with lines wrapped near kLineWidth.
  template <class T, class Format>
  void list(std::string_view key, const std::vector<T>& items, Format format) {
    if (items.empty()) return;
    out_ += std::string(key) + " = {\n  ";
    std::size_t line = 2;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::string item = format(items[i]);
      if (i > 0) {
        if (line + item.size() + 2 > kLineWidth) {
          out_ += ",\n  ";
          line = 2;
        } else {
          out_ += ", ";
          line += 2;
        }
      }
      out_ += item;
      line += item.size();
    }
    out_ += "}\n";
  }

  std::string take() { return std::move(out_); }

 private:
  std::string out_ = "ENVI\n";
};

bool has_extra(const Metadata& meta, std::string_view key) {
  for (const auto& entry : meta.extra)
    if (entry.first == key) return true;
  return false;
}

// A scaling that did not come from the header's own keys (a .gain file, HDF5
// attributes) is written as ENVI's gain and offset lists, so that it travels on.
void write_scaling(HeaderWriter& w, const Metadata& meta) {
  if (!meta.scaling.applies()) return;
  for (const char* key : {"data gain values", "data offset values", "reflectance scale factor"})
    if (has_extra(meta, key)) return;
  auto as_number = [](double v) { return number(v); };
  w.list("data gain values", meta.scaling.gain, as_number);
  w.list("data offset values", meta.scaling.offset, as_number);
}

}  // namespace

std::string format_envi_header(const EnviHeader& header) {
  const auto& info = header.info;
  const auto& meta = info.meta;
  auto as_number = [](auto v) { return number(v); };
  HeaderWriter w;
  if (!meta.description.empty()) w.braced("description", meta.description);
  w.scalar("samples", number(info.shape.samples));
  w.scalar("lines", number(info.shape.lines));
  w.scalar("bands", number(info.shape.bands));
  w.scalar("header offset", number(header.header_offset));
  w.name("file type", meta.file_type.empty() ? "ENVI Standard" : meta.file_type);
  w.scalar("data type", number(static_cast<int>(info.type)));
  w.scalar("interleave", std::string(interleave_name(header.interleave)));
  w.scalar("byte order", number(static_cast<int>(header.byte_order)));
  if (meta.data_ignore_value) w.scalar("data ignore value", number(*meta.data_ignore_value));
  if (!meta.map_info.empty()) w.braced("map info", meta.map_info);
  if (!meta.coordinate_system_string.empty()) w.braced("coordinate system string", meta.coordinate_system_string);
  if (!meta.wavelength_units.empty()) w.name("wavelength units", meta.wavelength_units);
  w.list("wavelength", meta.wavelength, as_number);
  w.list("fwhm", meta.fwhm, as_number);
  w.list("bbl", meta.bbl, as_number);
  w.list("band names", meta.band_names, list_item);
  if (meta.classes) w.scalar("classes", number(*meta.classes));
  w.list("class lookup", meta.class_lookup, as_number);
  w.list("class names", meta.class_names, list_item);
  w.list("spectra names", meta.spectra_names, list_item);
  for (const auto& [key, raw] : meta.extra) {
    const std::string name = one_line(key);
    if (name.empty() || name.find('=') != std::string::npos || name.front() == ';' || envi::is_known_key(name))
      continue;  // cannot be written back as a key of its own
    const std::string value(envi::trim(raw));
    if (value.size() >= 2 && value.front() == '{' && value.back() == '}')
      w.braced(name, std::string_view(value).substr(1, value.size() - 2));
    else
      w.scalar(name, plain_value(value));
  }
  write_scaling(w, meta);
  return w.take();
}

}  // namespace hb::io
