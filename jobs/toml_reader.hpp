// Typed access to one TOML table that remembers which keys were read, so that unknown
// (misspelt) keys are errors, and that names the key and its line in every error.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "src/base/error.hpp"

namespace hb::jobs {

// A key as TOML writes it: bare when it can be, else quoted and escaped, so that an empty
// or multi-line key still names itself on one line of an error.
std::string toml_key(const std::string& key);

class TomlReader {
 public:
  // `prefix` is the table's dotted name ("mnf", "collection"), empty for the root.
  TomlReader(const toml::table& table, std::string file, std::string prefix);

  Status string(const char* key, std::string& out);
  Status integer(const char* key, std::int64_t& out, std::int64_t min, std::int64_t max);
  Status number(const char* key, double& out, double min, double max);
  Status boolean(const char* key, bool& out);
  // `lines`, when given, receives each entry's line (for errors found after parsing).
  Status strings(const char* key, std::vector<std::string>& out, std::vector<std::int64_t>* lines = nullptr);
  // A value that must be one of `allowed`.
  Status choice(const char* key, std::string& out, const std::vector<std::string>& allowed);
  bool has(const char* key) const { return table_.contains(key); }
  const toml::node* node(const char* key);

  // Every key not read above is an error naming the key and its line.
  Status finish() const;

  Error error(const char* key, const std::string& message) const;
  Error error_at(const toml::node& node, const std::string& key, const std::string& message) const;
  std::string dotted(const std::string& key) const { return prefix_.empty() ? key : prefix_ + "." + key; }
  const std::string& file() const { return file_; }

 private:
  const toml::table& table_;
  std::string file_;
  std::string prefix_;
  std::set<std::string> used_;
};

std::string line_of(const toml::source_region& where);
std::string line_of(std::int64_t line);

}  // namespace hb::jobs
