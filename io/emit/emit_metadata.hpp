// Reads what an EMIT granule says about its cube into io::Metadata. Every failure is
// bad input naming the granule and the HDF5 path at fault.
#pragma once

#include <hdf5.h>

#include <string>

#include "src/base/error.hpp"
#include "io/metadata.hpp"

namespace hb::io::emit {

// `file` is the open granule, `variable` its root variable (open as `dataset`), `bands`
// the variable's third dimension.
Result<Metadata> read_granule_metadata(hid_t file, hid_t dataset, const std::string& variable, std::int64_t bands,
                                       const std::string& path);

}  // namespace hb::io::emit
