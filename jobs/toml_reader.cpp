#include "jobs/toml_reader.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>

namespace hb::jobs {

std::string line_of(std::int64_t line) { return fmt::format("line {}", line); }
std::string line_of(const toml::source_region& where) { return line_of(static_cast<std::int64_t>(where.begin.line)); }

std::string toml_key(const std::string& key) {
  const auto bare = [](unsigned char c) { return std::isalnum(c) != 0 || c == '_' || c == '-'; };
  if (!key.empty() && std::all_of(key.begin(), key.end(), bare)) return key;
  std::string quoted = "\"";
  for (const unsigned char c : key) {
    if (c == '"' || c == '\\') quoted += fmt::format("\\{}", static_cast<char>(c));
    else if (c < 0x20 || c == 0x7f) quoted += fmt::format("\\u{:04X}", c);
    else quoted += static_cast<char>(c);
  }
  return quoted + "\"";
}

TomlReader::TomlReader(const toml::table& table, std::string file, std::string prefix)
    : table_(table), file_(std::move(file)), prefix_(std::move(prefix)) {}

Error TomlReader::error_at(const toml::node& at, const std::string& key, const std::string& message) const {
  return bad_input(file_, dotted(key), line_of(at.source()) + ": " + message);
}

Error TomlReader::error(const char* key, const std::string& message) const {
  const toml::node* at = table_.get(key);
  return error_at(at != nullptr ? *at : static_cast<const toml::node&>(table_), key, message);
}

const toml::node* TomlReader::node(const char* key) {
  used_.insert(key);
  return table_.get(key);
}

Status TomlReader::string(const char* key, std::string& out) {
  const toml::node* n = node(key);
  if (n == nullptr) return {};
  if (!n->is_string()) return error(key, "must be a string");
  out = **n->as_string();
  return {};
}

Status TomlReader::choice(const char* key, std::string& out, const std::vector<std::string>& allowed) {
  HB_TRY(string(key, out));
  for (const auto& a : allowed)
    if (a == out) return {};
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  return error(key, "'" + out + "' is not one of " + list);
}

Status TomlReader::integer(const char* key, std::int64_t& out, std::int64_t min, std::int64_t max) {
  const toml::node* n = node(key);
  if (n == nullptr) return {};
  if (!n->is_integer()) return error(key, "must be an integer");
  const std::int64_t v = **n->as_integer();
  if (v < min || v > max) return error(key, fmt::format("{} is outside [{}, {}]", v, min, max));
  out = v;
  return {};
}

Status TomlReader::number(const char* key, double& out, double min, double max) {
  const toml::node* n = node(key);
  if (n == nullptr) return {};
  if (!n->is_number()) return error(key, "must be a number");
  const double v = n->value<double>().value_or(0.0);
  if (!(v >= min && v <= max)) return error(key, fmt::format("{} is outside [{}, {}]", v, min, max));
  out = v;
  return {};
}

Status TomlReader::boolean(const char* key, bool& out) {
  const toml::node* n = node(key);
  if (n == nullptr) return {};
  if (!n->is_boolean()) return error(key, "must be true or false");
  out = **n->as_boolean();
  return {};
}

Status TomlReader::strings(const char* key, std::vector<std::string>& out, std::vector<std::int64_t>* lines) {
  const toml::node* n = node(key);
  if (n == nullptr) return {};
  const toml::array* list = n->as_array();
  if (list == nullptr) return error(key, "must be a list of strings");
  for (const auto& item : *list) {
    if (!item.is_string()) return error_at(item, key, "every entry must be a string");
    out.push_back(**item.as_string());
    if (lines != nullptr) lines->push_back(static_cast<std::int64_t>(item.source().begin.line));
  }
  return {};
}

Status TomlReader::finish() const {
  for (const auto& [key, value] : table_) {
    const std::string name(key.str());
    if (used_.count(name) == 0) return error_at(value, toml_key(name), "unknown key (misspelt?)");
  }
  return {};
}

}  // namespace hb::jobs
