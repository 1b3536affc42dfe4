#include "jobs/scene_queue.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/core.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "jobs/manifest.hpp"  // journal_dir

namespace hb::jobs {
namespace fs = std::filesystem;

Result<const SceneSpec*> SceneQueue::take() {
  while (next_ < scenes_.size()) {
    const auto claim = (fs::path(claims_) / fmt::format("{}-{}", round_, next_)).string();
    const int fd = ::open(claim.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      return scenes_[next_++];
    }
    if (errno == EINTR) continue;
    if (errno != EEXIST) return io_error(claims_, fmt::format("cannot claim a scene: {}", std::strerror(errno)));
    ++next_;  // another rank has it
  }
  return nullptr;
}

std::string claims_folder(const std::string& output_dir, int shard, int shards) {
  const std::string name = shards > 1 ? fmt::format("claims-shard-{}-of-{}", shard, shards) : "claims";
  return (fs::path(journal_dir(output_dir)) / name).string();
}

Status claims_ready(const std::string& folder) {
  std::error_code ec;
  fs::remove_all(folder, ec);
  if (!ec) fs::create_directories(folder, ec);
  if (ec) return io_error(folder, "cannot prepare the scene claims: " + ec.message());
  return {};
}

void remove_claims(const std::string& folder) {
  std::error_code ec;
  fs::remove_all(folder, ec);
}

}  // namespace hb::jobs
