#include "io/file_identity.hpp"

#include <sys/stat.h>

#include <filesystem>

#include "io/cube.hpp"
#include "io/envi_header.hpp"
#include "io/gtiff/gdal_module.hpp"

namespace hb::io {
namespace {

struct Identity {
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
  std::string normalised;  // absolute, symbolic links of existing parents resolved
};

Identity identify(const std::string& file) {
  Identity id;
  struct stat st {};
  if (::stat(file.c_str(), &st) == 0) {
    id.exists = true;
    id.device = st.st_dev;
    id.inode = st.st_ino;
  }
  std::error_code ec;
  const auto canonical = std::filesystem::weakly_canonical(std::filesystem::absolute(file, ec), ec);
  id.normalised = ec ? file : canonical.lexically_normal().string();
  return id;
}

bool same_file(const Identity& a, const Identity& b) {
  if (a.exists && b.exists) return a.device == b.device && a.inode == b.inode;
  return a.normalised == b.normalised;
}

std::string described(const FilePlan::Entry& e) {
  const std::string named = e.option + " '" + e.given + "'";
  return e.file == e.given ? named : named + " (its file " + e.file + ")";
}

}  // namespace

void FilePlan::read_cube(const std::string& option, const std::string& path) {
  if (path.empty()) return;
  if (format_from_path(path) == CubeFormat::envi) {
    if (auto pair = resolve_envi_paths(path)) {
      reads_.push_back({option, path, pair->header});
      reads_.push_back({option, path, pair->data});
      return;
    }
  }
  read_file(option, path);  // HDF5, or an ENVI name that opening will report as missing
}

void FilePlan::read_file(const std::string& option, const std::string& path) {
  if (!path.empty()) reads_.push_back({option, path, path});
}

void FilePlan::write_cube(const std::string& option, const std::string& path) {
  if (path.empty()) return;
  if (format_from_path(path) == CubeFormat::gtiff) {
    gtiff::load_in_background();  // ready by the time the output is created
    write_file(option, path + ".aux.xml");  // GDAL's sidecar
  }
  if (format_from_path(path) != CubeFormat::envi) return write_file(option, path);
  const auto pair = envi_output_paths(path);
  writes_.push_back({option, path, pair.header});
  writes_.push_back({option, path, pair.data});
}

void FilePlan::write_file(const std::string& option, const std::string& path) {
  if (!path.empty()) writes_.push_back({option, path, path});
}

Status FilePlan::check() const {
  std::vector<Identity> inputs;
  for (const auto& in : reads_) inputs.push_back(identify(in.file));
  std::vector<Identity> outputs;
  for (std::size_t o = 0; o < writes_.size(); ++o) {
    const auto& out = writes_[o];
    const Identity id = identify(out.file);
    for (std::size_t i = 0; i < reads_.size(); ++i)
      if (inputs[i].exists && id.exists && same_file(id, inputs[i]))
        return Error{ErrorKind::usage, out.file, out.option,
                     "would overwrite the input " + described(reads_[i]) + "; name another output"};
    for (std::size_t earlier = 0; earlier < outputs.size(); ++earlier)
      if (same_file(id, outputs[earlier]))
        return Error{ErrorKind::usage, out.file, out.option,
                     "is also written by " + described(writes_[earlier]) + "; give each output its own name"};
    outputs.push_back(id);
  }
  return {};
}

}  // namespace hb::io
