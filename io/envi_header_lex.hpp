// Internal: splits ENVI header text into (key, value) entries and parses the scalar
// and list values they hold. No knowledge of which keys mean what (that is in
// envi_header.cpp), so that the tokenising rules are in one small place.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/error.hpp"

namespace hb::io::envi {

// Headers are text of a few KiB; a larger file is not a header (read_envi_header).
inline constexpr std::size_t kMaxHeaderBytes = std::size_t{16} << 20;

struct Entry {
  std::string key;         // lower case, runs of blanks collapsed to one space
  std::string_view value;  // trimmed; for {...} values the text between the braces
  bool braced = false;     // the value was written as {...}
};

// Checks the text is a header (starts with "ENVI", no binary bytes) and
// splits it into entries in file order. Lines starting with ';' are comments; lines
// without '=' are ignored, as ENVI and Spectral Python do.
Result<std::vector<Entry>> lex(std::string_view text, const std::string& file);

std::string_view trim(std::string_view s);

// Keys with a Metadata/EnviHeader field; the others travel in Metadata::extra.
bool is_known_key(std::string_view key);

// Comma-separated items of a {...} value, each trimmed. "{}" has no items; an
// unbraced value is a list of one.
std::vector<std::string_view> split_list(const Entry& entry);

// Whole-string numbers (after trimming); nothing else in the string is allowed.
bool parse_int(std::string_view s, std::int64_t& out);
bool parse_double(std::string_view s, double& out);

}  // namespace hb::io::envi
