#include "jobs/schedule.hpp"

#include <fmt/core.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <numeric>
#include <optional>
#include <vector>

namespace hb::jobs {
namespace fs = std::filesystem;

std::vector<int> deal_by_size(const std::vector<Sized>& items, int bins) {
  std::vector<std::size_t> order(items.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (items[a].bytes != items[b].bytes) return items[a].bytes > items[b].bytes;
    return items[a].name < items[b].name;
  });
  std::vector<std::int64_t> load(static_cast<std::size_t>(std::max(bins, 1)), 0);
  std::vector<int> owner(items.size(), 0);
  for (const std::size_t i : order) {
    const auto least = std::min_element(load.begin(), load.end()) - load.begin();
    owner[i] = static_cast<int>(least);
    load[static_cast<std::size_t>(least)] += std::max<std::int64_t>(items[i].bytes, 1);
  }
  return owner;
}

Fingerprint& Fingerprint::add(const std::string& text) {
  for (const unsigned char c : text) {
    hash_ ^= c;
    hash_ *= 1099511628211ull;
  }
  hash_ ^= 0xff;  // separator: ("ab","c") differs from ("a","bc")
  hash_ *= 1099511628211ull;
  return *this;
}

Fingerprint& Fingerprint::add(std::int64_t value) { return add(std::to_string(value)); }

namespace {

// FNV-1a over 8-byte words (then the tail bytes): one multiply per word keeps hashing
// a scene near disk speed. A change detector, not a cryptographic digest.
std::optional<std::string> content_hash(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return std::nullopt;
  std::uint64_t h = 14695981039346656037ull;
  std::vector<unsigned char> buffer(std::size_t{1} << 20);
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), f)) > 0) {
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, buffer.data() + i, 8);
      h = (h ^ word) * 1099511628211ull;
    }
    for (; i < n; ++i) h = (h ^ buffer[i]) * 1099511628211ull;
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) return std::nullopt;
  return fmt::format("{:016x}", h);
}

// Same inode, size and times as when hashed: the same content (the steps of one run ask
// for a scene's and truth's hash again and again).
std::string stat_key(const struct stat& st) {
  return fmt::format("{}:{}:{}:{}.{}:{}.{}", st.st_dev, st.st_ino, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                     st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

}  // namespace

Fingerprint& Fingerprint::add_file(const std::string& path) {
  static std::map<std::string, std::pair<std::string, std::string>> hashed;  // path -> (stat key, hash)
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return add("absent");
  const std::string key = stat_key(st);
  auto at = hashed.find(path);
  if (at != hashed.end() && at->second.first == key) return add(at->second.second);
  const auto hash = content_hash(path);
  if (!hash) return add("unreadable");
  hashed[path] = {key, *hash};
  return add(*hash);
}

std::string Fingerprint::hex() const { return fmt::format("{:016x}", hash_); }

std::int64_t scene_bytes(const std::string& path) {
  std::error_code ec;
  std::int64_t total = 0;
  const fs::path p(path);
  if (p.extension() == ".hdr") {
    for (const char* ext : {".img", ".dat", ".raw", ".bsq", ".bil", ".bip", ""}) {
      const auto data = fs::path(p).replace_extension(ext);
      if (data != p && fs::is_regular_file(data, ec)) return static_cast<std::int64_t>(fs::file_size(data, ec));
    }
  }
  const auto size = fs::file_size(p, ec);
  if (!ec) total = static_cast<std::int64_t>(size);
  return total;
}

}  // namespace hb::jobs
