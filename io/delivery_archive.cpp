#include "io/delivery_archive.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

namespace hb::io {
namespace {

namespace fs = std::filesystem;

using Reader = std::unique_ptr<archive, decltype(&archive_read_free)>;

Result<Reader> open_reader(const std::string& path) {
  Reader reader(archive_read_new(), &archive_read_free);
  archive_read_support_filter_gzip(reader.get());
  archive_read_support_filter_none(reader.get());
  archive_read_support_format_tar(reader.get());
  if (archive_read_open_filename(reader.get(), path.c_str(), 1 << 20) != ARCHIVE_OK) {
    std::error_code error;
    if (!fs::is_regular_file(path, error)) return io_error(path, "no such file");
    return bad_input(path, "archive", std::string("not a tar.gz delivery: ") + archive_error_string(reader.get()));
  }
  return reader;
}

Error corrupt(const std::string& path, const std::string& member, archive* reader) {
  const char* detail = archive_error_string(reader);
  return bad_input(path, member.empty() ? "archive" : member,
                   std::string("truncated or corrupt archive: ") + (detail ? detail : "unreadable"));
}

std::string base_name(const std::string& member) { return fs::path(member).filename().string(); }

// The header beside a data member: NAME.hdr, or STEM.hdr for NAME.EXT.
std::string header_of(const std::string& data, const std::set<std::string>& members) {
  if (members.count(data + ".hdr") != 0) return data + ".hdr";
  const fs::path p(data);
  if (p.has_extension()) {
    const std::string stem_header = (p.parent_path() / p.stem()).string() + ".hdr";
    if (members.count(stem_header) != 0) return stem_header;
  }
  return {};
}

bool is_calibration(const std::string& member) {
  const std::string ext = fs::path(member).extension().string();
  return ext == ".gain" || ext == ".spc";
}

Status write_member(archive* reader, const std::string& archive_path, const std::string& member,
                    const std::string& target) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error(target, std::string("cannot create: ") + std::strerror(errno));
  const void* block = nullptr;
  std::size_t size = 0;
  la_int64_t offset = 0;
  Status status;
  for (;;) {
    const int r = archive_read_data_block(reader, &block, &size, &offset);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) {
      status = corrupt(archive_path, member, reader);
      break;
    }
    if (::pwrite(fd, block, size, offset) != static_cast<ssize_t>(size)) {
      status = io_error(target, std::string("cannot write: ") + std::strerror(errno));
      break;
    }
  }
  if (::close(fd) != 0 && status.ok()) status = io_error(target, std::string("cannot close: ") + std::strerror(errno));
  return status;
}

}  // namespace

bool is_delivery_archive(const std::string& path) {
  const std::string name = fs::path(path).filename().string();
  return name.ends_with(".tar.gz") || name.ends_with(".tgz") || name.ends_with(".tar");
}

Result<DeliveryContents> inspect_delivery(const std::string& path) {
  auto reader = open_reader(path);
  if (!reader) return reader.error();
  std::map<std::string, std::int64_t> files;  // regular members and their sizes
  archive_entry* entry = nullptr;
  std::string last;
  for (;;) {
    const int r = archive_read_next_header(reader->get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) return corrupt(path, last, reader->get());
    last = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    if (archive_entry_filetype(entry) == AE_IFREG) files[last] = archive_entry_size(entry);
    if (archive_read_data_skip(reader->get()) < ARCHIVE_WARN) return corrupt(path, last, reader->get());
  }
  std::set<std::string> names;
  for (const auto& [name, size] : files) names.insert(name);
  DeliveryContents contents;
  for (const auto& [name, size] : files) {
    if (name.ends_with(".hdr") || size <= contents.image_bytes) continue;
    const std::string header = header_of(name, names);
    if (header.empty()) continue;
    contents = {name, header, {}, size};
  }
  if (contents.image.empty()) return bad_input(path, "archive", "no ENVI image with its .hdr inside");
  for (const auto& name : names)
    if (is_calibration(name)) contents.calibration.push_back(name);
  return contents;
}

Result<std::string> unpack_delivery(const std::string& path, const DeliveryContents& contents,
                                    const std::string& folder) {
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) return io_error(folder, "cannot create: " + error.message());
  std::set<std::string> wanted{contents.image, contents.header};
  wanted.insert(contents.calibration.begin(), contents.calibration.end());
  auto reader = open_reader(path);
  if (!reader) return reader.error();
  archive_entry* entry = nullptr;
  std::size_t unpacked = 0;
  while (unpacked < wanted.size()) {
    const int r = archive_read_next_header(reader->get(), &entry);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) return corrupt(path, {}, reader->get());
    const std::string name = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
    if (wanted.count(name) == 0 || archive_entry_filetype(entry) != AE_IFREG) continue;
    HB_TRY(write_member(reader->get(), path, name, (fs::path(folder) / base_name(name)).string()));
    ++unpacked;
  }
  if (unpacked < wanted.size()) return bad_input(path, "archive", "members changed while the job ran");
  return (fs::path(folder) / base_name(contents.header)).string();
}

}  // namespace hb::io
