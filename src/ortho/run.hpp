// `hyperbatch ortho` as a function a job runner can call as a step: a product in sensor
// geometry (any cube open_cube reads: a scene, MNF components, a class map, SAM
// scores) and a GLT in, the product on the GLT's map grid out.
//
//   ortho::OrthoJob job;
//   job.product = "classes.hdr"; job.glt = "scene_glt.hdr"; job.output = "classes_map.tif";
//   auto result = ortho::run(job);   // Result<OrthoResult>; errors are values
//
// The grid's rows are dealt over the ranks as blocks of tiles; each rank reads its GLT
// rows, checks every entry against the product (bad input before anything is created),
// reads the product rows its tiles point at and gathers (src/ortho/gather.hpp, CPU or
// CUDA). The output is written collectively (HDF5) or row by row (ENVI, GeoTIFF staging)
// and carries the grid: ENVI map info / coordinate system string, HDF5 and GeoTIFF
// geotransform and spatial reference. Grid pixels without a source are no-data: NaN
// for floating-point products, the data ignore value or 0 (unclassified) for integers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mpi/comm.hpp"
#include "src/backend/backend.hpp"

namespace hb::ortho {

struct OrthoJob {
  std::string product;
  std::string glt;     // EMIT granule (.nc/.h5) or ENVI GLT
  std::string output;  // ENVI, .h5 or .tif
  BackendKind backend = BackendKind::automatic;
  std::int64_t tile_rows = 0;                                // grid rows per tile, 0 = from the budget
  std::int64_t tile_budget_bytes = std::int64_t{256} << 20;  // per grid tile
  const mpi::Comm* comm = nullptr;                           // null = every rank
};

struct OrthoResult {
  std::vector<std::string> outputs;
  std::string backend;
  std::int64_t lines = 0, samples = 0;  // the grid
  std::int64_t filled = 0;              // grid pixels with a source pixel
  std::int64_t empty = 0;               // grid pixels without (no-data)
  double seconds = 0;
};

using ProgressFn = std::function<void(std::int64_t done_rows, std::int64_t total_rows)>;

Result<OrthoResult> run(const OrthoJob& job, const ProgressFn& progress = {});

}  // namespace hb::ortho
