// `hyperbatch sam` as a function a job runner can call as a step: files in, files out.
// The CLI parses options into a SamJob; everything else happens here.
//
//   sam::SamJob job;
//   job.scene = "scene.hdr"; job.library = "minerals.sli"; job.output = "classes.hdr";
//   job.method = sam::Method::sam; job.max_angle = 0.10;
//   auto result = sam::run(job);            // Result<SamResult>; errors are values
//
// Exactly one reference source: `library` (ENVI spectral library or HDF5 /library),
// `truth` (class raster over the scene: class means) or `train_file` (KNN training file:
// class means). Outputs are written under temporary names and renamed on success; on
// error nothing is left under a final name. Tiles stream through io::TileReader
// (read-ahead overlaps scoring); under mpirun/srun each rank scores a contiguous block of
// rows and writes it into the same output files.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "mpi/comm.hpp"
#include "src/backend/backend.hpp"
#include "src/dedup/dedup.hpp"
#include "src/sam/resample.hpp"
#include "src/sam/scorer.hpp"

namespace hb::sam {

struct SamJob {
  std::string scene;
  std::string library;       // ENVI .sli or HDF5 with /library
  std::string truth;         // class raster aligned with the scene -> class-mean spectra
  std::string train_file;    // KNN HDF5 training file -> class-mean spectra
  std::string output;        // class map: ENVI Classification (+ OUT_score) or OUT.h5 (/cube, /score)
  std::string rules;         // per-class score cube (angles or correlations), "" = none
  std::string save_library;  // the library as compared (resampled), HDF5 /library, "" = none
  Method method = Method::sam;
  std::optional<double> max_angle;        // radians; SAM only
  std::optional<double> min_correlation;  // SCM only
  Resampling resampling = Resampling::automatic;
  BackendKind backend = BackendKind::automatic;
  Formulation formulation = Formulation::automatic;
  std::int64_t tile_rows = 0;                               // 0 = from tile_budget_bytes
  std::int64_t tile_budget_bytes = std::int64_t{512} << 20;  // per tile: raw samples, scores, outputs
  // Score each distinct spectrum of a tile once (exact duplicates: no-data borders
  // without a declared ignore value, saturated or repeated pixels); auto as knn --dedup.
  dedup::Mode dedup = dedup::Mode::automatic;
  // The ranks that share this scene (a block of rows each, one output file); null = every
  // rank. A job runner that gives each rank its own scenes passes a one-rank communicator.
  const mpi::Comm* comm = nullptr;
};

struct SamResult {
  std::vector<std::string> outputs;  // final paths written
  std::string backend;
  std::string formulation;
  std::string resampling;            // how the library met the scene's bands
  std::int64_t references = 0;
  std::int64_t bands = 0;            // scene bands compared
  std::vector<std::int64_t> excluded_bands;
  std::int64_t classified = 0;
  std::int64_t below_threshold = 0;  // valid pixels left unclassified by --max-angle / --min-correlation
  std::int64_t ignored = 0;          // ignored or degenerate pixels
  std::int64_t tile_rows = 0;
  std::int64_t duplicates = 0;       // pixels whose scores were copied from an identical one
  std::int64_t deduped_tiles = 0;
  double seconds = 0;
};

using ProgressFn = std::function<void(std::int64_t done_rows, std::int64_t total_rows)>;

Result<SamResult> run(const SamJob& job, const ProgressFn& progress = {});

}  // namespace hb::sam
