// Loads the GDAL module (libhb_gdal.so, io/gtiff/cog_module.h) once per process, behind
// dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND), so that GDAL's serial HDF5 and the
// MPI HDF5 hyperbatch links never resolve each other's symbols.
#pragma once

#include <string>

#include "io/gtiff/cog_module.h"
#include "src/base/error.hpp"

namespace hb::io::gtiff {

struct CogModule {
  HbCogWriteFn write = nullptr;
  HbGdalDescribeFn describe = nullptr;
};

// Starts loading the module on a thread of its own and returns: loading GDAL and the
// libraries it brings costs about 40 ms, which then overlaps the command's reading and
// computing instead of delaying its output. cog_writer() waits for that load.
void load_in_background();

// The module's hb_cog_write, or an io error naming the module and why it did not load.
// Looked for in $HB_GDAL_MODULE, beside the executable, then where the build put it.
Result<CogModule> cog_writer();

// Where the module was loaded from (empty before the first successful cog_writer()).
std::string module_path();

}  // namespace hb::io::gtiff
