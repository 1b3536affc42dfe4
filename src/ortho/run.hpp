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

#include "io/cube.hpp"
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
  // An HDF5 product's dataset to put onto the grid ("" = /cube): a product stored
  // beside the class map in one file (knn /confidence, sam /score).
  std::string dataset;
  // What the output's description names as the product (default: `product`), for a
  // product written to a temporary first (`--ortho` on mnf, knn, sam).
  std::string described_as;
  // Runs on the rank that renames, once the output is complete and before it appears
  // (io::CubeWriter::finish_before_commit): what must appear with it or not at all.
  io::CubeWriter::Finisher finish;
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

// Checks, before any work, that the GLT opens and fits a product of `product_shape`
// (named `product_path` in errors): the scene shape it records, and every entry inside
// the product. Collective over `ranks` (each checks a block of grid rows). Bad input
// naming the file and the field otherwise.
Status check_glt(const std::string& glt, const io::CubeShape& product_shape, const std::string& product_path,
                 const mpi::Comm& ranks);

}  // namespace hb::ortho
