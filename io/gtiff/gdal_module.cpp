#include "io/gtiff/gdal_module.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <future>
#include <mutex>
#include <system_error>
#include <vector>

namespace hb::io::gtiff {
namespace {

constexpr const char* kModuleName = "libhb_gdal.so";

struct Loaded {
  HbCogWriteFn write = nullptr;
  HbGdalDescribeFn describe = nullptr;
  std::string path;
  std::string error;
};

std::vector<std::string> candidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("HB_GDAL_MODULE"); env != nullptr && *env != '\0') paths.emplace_back(env);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) paths.push_back((exe.parent_path() / kModuleName).string());
#ifdef HB_GDAL_MODULE_PATH
  paths.emplace_back(HB_GDAL_MODULE_PATH);
#endif
  return paths;
}

Loaded load() {
  Loaded loaded;
  for (const auto& path : candidates()) {
    if (!std::filesystem::exists(path)) continue;
    // DEEPBIND: the module and the libraries it brings (GDAL, serial HDF5, netCDF) look
    // up symbols among themselves first, ahead of the MPI HDF5 already in the process.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    if (handle == nullptr) {
      loaded.error = dlerror();
      continue;
    }
    auto abi = reinterpret_cast<HbCogAbiFn>(dlsym(handle, "hb_cog_abi"));
    auto write = reinterpret_cast<HbCogWriteFn>(dlsym(handle, "hb_cog_write"));
    auto describe = reinterpret_cast<HbGdalDescribeFn>(dlsym(handle, "hb_gdal_describe"));
    if (abi == nullptr || write == nullptr || describe == nullptr || abi() != HB_COG_ABI_VERSION) {
      loaded.error = path + " is not a hyperbatch GDAL module of this version";
      dlclose(handle);
      continue;
    }
    loaded.write = write;
    loaded.describe = describe;
    loaded.path = path;
    return loaded;
  }
  if (loaded.error.empty()) loaded.error = std::string(kModuleName) + " not found (set HB_GDAL_MODULE)";
  return loaded;
}

// The load, started once. Its future joins the loading thread at exit at the latest.
std::shared_future<Loaded>& loading() {
  static std::shared_future<Loaded> future;
  return future;
}

void start_once() {
  static std::once_flag started;
  std::call_once(started, [] {
    try {
      loading() = std::async(std::launch::async, load).share();
    } catch (const std::system_error&) {  // no thread to be had: load when first needed
      loading() = std::async(std::launch::deferred, load).share();
    }
  });
}

const Loaded& loaded_module() {
  start_once();
  return loading().get();
}

}  // namespace

void load_in_background() { start_once(); }

Result<CogModule> cog_writer() {
  const Loaded& loaded = loaded_module();
  if (loaded.write == nullptr) return io_error(kModuleName, "cannot load the GDAL module: " + loaded.error);
  return CogModule{loaded.write, loaded.describe};
}

std::string module_path() { return loaded_module().path; }

}  // namespace hb::io::gtiff
