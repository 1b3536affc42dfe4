#include "jobs/deliveries.hpp"

#include <fmt/core.h>

#include <cstdlib>
#include <filesystem>
#include <functional>

#include "io/delivery_archive.hpp"
#include "mpi/agree.hpp"

namespace hb::jobs {
namespace {

namespace fs = std::filesystem;

std::string scratch_root() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

}  // namespace

Status check_deliveries(const std::vector<SceneSpec>& scenes, const mpi::Comm& comm) {
  Status local;
  if (comm.is_root())
    for (const auto& s : scenes) {
      if (s.generate || !io::is_delivery_archive(s.path)) continue;
      auto contents = io::inspect_delivery(s.path);
      if (!contents) {
        local = contents.error();
        break;
      }
    }
  return mpi::agree(local, comm);
}

UnpackedScene::~UnpackedScene() {
  std::error_code ignored;
  fs::remove_all(folder_, ignored);
}

Result<std::unique_ptr<UnpackedScene>> unpack_scene(const SceneSpec& listed, const std::string& job_output, int rank) {
  if (listed.generate || !io::is_delivery_archive(listed.path)) return std::unique_ptr<UnpackedScene>();
  auto contents = io::inspect_delivery(listed.path);
  if (!contents) return contents.error();
  const std::size_t run_key = std::hash<std::string>{}(fs::absolute(job_output).string());
  const fs::path folder =
      fs::path(scratch_root()) / fmt::format("hyperbatch-{:016x}", run_key) / fmt::format("rank{}", rank) / listed.name;
  std::error_code ignored;
  fs::remove_all(folder, ignored);  // left by a killed run
  auto header = io::unpack_delivery(listed.path, *contents, folder.string());
  if (!header) {
    fs::remove_all(folder, ignored);
    return header.error();
  }
  SceneSpec scene = listed;
  scene.path = *header;
  return std::make_unique<UnpackedScene>(std::move(scene), folder.string());
}

}  // namespace hb::jobs
