// ENVI <-> HDF5 conversion as a function: `hyperbatch ingest/export` and the job
// runner's ingest step share it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "io/cube.hpp"
#include "io/units.hpp"
#include "src/base/error.hpp"

namespace hb::io {

struct ConvertOptions {
  using Progress = std::function<void(std::int64_t rows_done, std::int64_t rows)>;
  std::string input;
  std::string output;
  std::string interleave;  // export only; empty = the scene's original interleave
  Progress progress;       // empty = none
  // raw: the stored numbers, any scaling carried as metadata (a lossless round trip);
  // physical: float32 physical values without the scaling.
  Units units = Units::raw;
};

// Streams `input` into `output` (whose format must be `expected_output`) in bounded
// memory; the output appears only when complete.
Status convert(const ConvertOptions& options, CubeFormat expected_output);

}  // namespace hb::io
