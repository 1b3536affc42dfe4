// ENVI <-> HDF5 conversion as a function: `hyperbatch ingest/export` and the job
// runner's ingest step share it.
#pragma once

#include <string>

#include "io/cube.hpp"
#include "io/error.hpp"

namespace hb::cli {

struct ConvertOptions {
  std::string input;
  std::string output;
  std::string interleave;     // export only; empty = the scene's original interleave
  bool show_progress = true;  // the job runner reports its own
};

// Streams `input` into `output` (whose format must be `expected_output`) in bounded
// memory; the output appears only when complete.
Status convert(const ConvertOptions& options, io::CubeFormat expected_output);

}  // namespace hb::cli
