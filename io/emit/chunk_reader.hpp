// Deflated granule variables inflated on every core. HDF5 runs a chunk's filters in the
// thread that reads, one chunk at a time, which made an EMIT granule 2.9x as slow to
// read as the same cube in ENVI on 64 cores. This reader asks HDF5 once, when it opens,
// where every chunk is stored; its reads then never call HDF5 (which is not
// thread-safe), so they may run beside another thread's HDF5 writes. A read takes the
// chunks' bytes (pread), inflates (libdeflate) and unshuffles them on the host threads
// (src/base/parallel_for.hpp) and copies the rows asked for; after a range that follows
// the last one, the chunks after it are decoded in the background, one for every core,
// and a range waits only for its own. It handles chunked datasets whose filters are
// deflate with or without shuffle, stored in the native byte order, every chunk written;
// any other, and collective reads under several ranks, stay with the library's H5Dread.
#pragma once

#include <memory>
#include <string>

#include "io/cube.hpp"
#include "io/hdf5_handle.hpp"

namespace hb::io::emit {

// The granule variable `name` read chunk by chunk, or nullptr when its layout or
// filters are not ones this reader handles (the caller keeps the library's reads).
std::unique_ptr<Cube> threaded_chunk_cube(const std::string& path, const std::string& name, const CubeInfo& info,
                                          h5::File& file, h5::Dataset& dataset);

}  // namespace hb::io::emit
