#include "io/envi_header_lex.hpp"

#include <algorithm>
#include <array>
#include <charconv>

namespace hb::io::envi {
namespace {

constexpr std::array<std::string_view, 21> kKnownKeys{
    "samples",      "lines",            "bands",       "header offset",  "file type",
    "data type",    "interleave",       "byte order",  "data ignore value", "bbl",
    "wavelength",   "fwhm",             "wavelength units", "band names", "classes",
    "class names",  "class lookup",     "spectra names", "description",  "map info",
    "coordinate system string"};

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

// Control bytes other than whitespace mean binary data (a data file passed as header).
bool is_binary(unsigned char c) { return (c < 0x20 && !is_blank(static_cast<char>(c))) || c == 0x7f; }

std::string normalise_key(std::string_view raw) {
  std::string key;
  key.reserve(raw.size());
  bool pending_space = false;
  for (char c : trim(raw)) {
    if (is_blank(c)) {
      pending_space = true;
      continue;
    }
    if (pending_space) key += ' ';
    pending_space = false;
    key += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return key;
}

std::size_t line_number(std::string_view text, std::size_t offset) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i)
    if (text[i] == '\n' || (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'))) ++line;
  return line;
}

Status check_signature_and_text(std::string_view text, const std::string& file) {
  std::string_view body = text;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);  // UTF-8 byte order mark
  const auto first_line = trim(body.substr(0, body.find_first_of("\r\n")));
  if (normalise_key(first_line) != "envi") {
    const bool binary = std::any_of(first_line.begin(), first_line.end(),
                                    [](char c) { return is_binary(static_cast<unsigned char>(c)); });
    return bad_input(file, "ENVI",
                     binary ? "not an ENVI header: binary data where the first line 'ENVI' should be"
                            : "not an ENVI header: the first line must be 'ENVI'");
  }
  const auto bad = std::find_if(text.begin(), text.end(), [](char c) { return is_binary(static_cast<unsigned char>(c)); });
  if (bad != text.end()) {
    const auto offset = static_cast<std::size_t>(bad - text.begin());
    return bad_input(file, "line " + std::to_string(line_number(text, offset)),
                     "binary byte " + std::to_string(static_cast<unsigned char>(*bad)) + " at offset " +
                         std::to_string(offset) + "; a header is plain text");
  }
  return {};
}

}  // namespace

bool is_known_key(std::string_view key) {
  return std::find(kKnownKeys.begin(), kKnownKeys.end(), key) != kKnownKeys.end();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

Result<std::vector<Entry>> lex(std::string_view text, const std::string& file) {
  HB_TRY(check_signature_and_text(text, file));
  std::vector<Entry> entries;
  std::size_t pos = text.find_first_of("\r\n");  // past the "ENVI" line
  pos = pos == std::string_view::npos ? text.size() : pos + 1;
  while (pos < text.size()) {
    std::size_t line_end = text.find_first_of("\r\n", pos);  // CR, LF and CRLF all end lines, as in GDAL
    if (line_end == std::string_view::npos) line_end = text.size();
    const std::string_view line = text.substr(pos, line_end - pos);
    const auto trimmed = trim(line);
    const std::size_t eq = line.find('=');
    pos = line_end + 1;
    if (trimmed.empty() || trimmed.front() == ';' || eq == std::string_view::npos) continue;

    Entry entry{normalise_key(line.substr(0, eq)), trim(line.substr(eq + 1)), false};
    if (entry.key.empty()) continue;  // "= value" names nothing
    if (!entry.value.empty() && entry.value.front() == '{') {
      // A {...} value runs to the first '}', across lines; ENVI lists do not nest.
      const std::size_t open = static_cast<std::size_t>(entry.value.data() - text.data());
      const std::size_t close = text.find('}', open);
      if (close == std::string_view::npos)
        return bad_input(file, entry.key, "list opened with '{' on line " + std::to_string(line_number(text, open)) +
                                              " is never closed with '}'");
      entry.value = trim(text.substr(open + 1, close - open - 1));
      entry.braced = true;
      const std::size_t after = text.find_first_of("\r\n", close);  // the rest of that line is ignored
      pos = after == std::string_view::npos ? text.size() : after + 1;
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

std::vector<std::string_view> split_list(const Entry& entry) {
  std::vector<std::string_view> items;
  if (entry.value.empty()) return items;
  if (!entry.braced) {
    items.push_back(entry.value);
    return items;
  }
  std::string_view rest = entry.value;
  for (;;) {
    const std::size_t comma = rest.find(',');
    items.push_back(trim(rest.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return items;
}

namespace {

// from_chars over the whole trimmed text; a leading '+' is accepted (ENVI writers emit
// it), "+-" is not.
template <class Number>
bool parse_number(std::string_view s, Number& out) {
  s = trim(s);
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return false;
  }
  if (s.empty()) return false;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc{} && end == s.data() + s.size();
}

}  // namespace

bool parse_int(std::string_view s, std::int64_t& out) { return parse_number(s, out); }
bool parse_double(std::string_view s, double& out) { return parse_number(s, out); }

}  // namespace hb::io::envi
