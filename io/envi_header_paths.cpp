// Pairs an ENVI header with its data file the way ENVI does, from either name.
#include <sys/stat.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "io/envi_header.hpp"

namespace hb::io {
namespace {

bool is_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Error not_a_regular_file(const std::string& path) { return io_error(path, "not a regular file (a directory)"); }

bool ends_with_hdr(const std::string& path) {
  if (path.size() < 4) return false;
  std::string ext = path.substr(path.size() - 4);
  for (char& c : ext)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return ext == ".hdr";
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

}  // namespace

Result<EnviPaths> resolve_envi_paths(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return io_error(path, std::string("cannot open: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) return not_a_regular_file(path);
  if (ends_with_hdr(path)) {
    const std::string stem = path.substr(0, path.size() - 4);
    static constexpr std::array<const char*, 15> kDataSuffixes{
        "", ".img", ".dat", ".raw", ".sli", ".bsq", ".bil", ".bip",
        ".IMG", ".DAT", ".RAW", ".SLI", ".BSQ", ".BIL", ".BIP"};
    std::vector<std::string> tried;
    for (const char* suffix : kDataSuffixes) {
      tried.push_back(stem + suffix);
      if (is_file(tried.back())) return EnviPaths{path, tried.back()};
    }
    // A directory named like a data file is what the user meant, but unreadable as one;
    // the bare stem is skipped since a folder beside NAME.hdr is common and harmless.
    for (std::size_t i = 1; i < tried.size(); ++i)
      if (is_directory(tried[i])) return not_a_regular_file(tried[i]);
    return io_error(path, "no data file beside this header (looked for " + joined(tried) + ")");
  }
  // NAME.EXT.hdr first (it cannot be ambiguous), then NAME.hdr.
  std::vector<std::string> tried{path + ".hdr", path + ".HDR"};
  const std::filesystem::path p(path);
  if (p.has_extension()) {
    auto stem = p;
    tried.push_back(stem.replace_extension(".hdr").string());
    tried.push_back(stem.replace_extension(".HDR").string());
  }
  for (const auto& header : tried)
    if (is_file(header)) return EnviPaths{header, path};
  return io_error(path, "no ENVI header for this data file (looked for " + joined(tried) + ")");
}

}  // namespace hb::io
