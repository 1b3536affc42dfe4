#include "jobs/schedule.hpp"

#include <fmt/core.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <vector>

#include "jobs/input_hashes.hpp"

namespace hb::jobs {
namespace fs = std::filesystem;

std::vector<std::size_t> largest_first(const std::vector<Sized>& items) {
  std::vector<std::size_t> order(items.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (items[a].bytes != items[b].bytes) return items[a].bytes > items[b].bytes;
    return items[a].name < items[b].name;
  });
  return order;
}

std::vector<int> deal_by_size(const std::vector<Sized>& items, int bins) {
  const auto order = largest_first(items);
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

Fingerprint& Fingerprint::add_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return add("absent");
  const auto hash = file_content_hash(path);
  return add(hash ? *hash : std::string("unreadable"));
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
