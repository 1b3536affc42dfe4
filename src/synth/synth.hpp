// Synthetic AVIRIS-like scenes: the project's own test and demo data. The same seed
// gives the same bytes, whatever the tile size used to stream them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "src/base/data_type.hpp"
#include "src/base/error.hpp"

namespace hb::synth {

struct SynthOptions {
  std::int64_t lines = 512;
  std::int64_t samples = 614;
  std::int64_t bands = 224;
  int classes = 6;
  std::uint64_t seed = 1;
  Interleave interleave = Interleave::bip;
  double fill_border = 0.0;    // fraction of the scene area that is no-data border, [0, 1)
  std::int64_t tile_rows = 0;  // rows generated per step; 0 = chosen from a memory budget
  int threads = 0;             // generator threads; 0 = one per hardware thread (same bytes either way)
};

struct SynthOutputs {
  std::string scene;    // OUT.hdr (+ OUT.img): int16 reflectance x 10000
  std::string truth;    // OUT_truth.hdr (+ .img): ENVI Classification, uint8, 0 = no data
  std::string library;  // OUT_library.hdr (+ .sli): ENVI Spectral Library of the materials
};

// Called after each tile with rows done and total rows.
using Progress = std::function<void(std::int64_t rows_done, std::int64_t rows_total)>;

// `out_header` names the scene header (NAME.hdr); truth and library go beside it.
Result<SynthOutputs> write_synthetic_scene(const std::string& out_header, const SynthOptions& options,
                                           const Progress& progress = {});

}  // namespace hb::synth
