// `hyperbatch knn` as a function: files in, files out. The CLI parses options into a
// KnnJob; everything else happens here so that it can be tested without a shell.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "io/cube.hpp"
#include "mpi/comm.hpp"
#include "src/classify/features.hpp"
#include "src/classify/sampling.hpp"
#include "src/knn/classify.hpp"
#include "src/knn/report.hpp"
#include "src/knn/ring.hpp"

namespace hb::knn {

struct KnnJob {
  std::string scene;
  std::string truth;          // class raster aligned with the scene (0 = unlabelled)
  std::string train_file;     // HDF5 training file; with --truth, the raster only evaluates
  std::string output;
  std::string report;         // "" = OUT_report.{json,md} when there are evaluation pixels
  std::string export_split;   // JSON with the training and evaluation pixels
  std::string save_training;  // HDF5 training file of the drawn training rows
  classify::SplitOptions split;
  classify::FeatureSpec features;
  // Set by the mnf:N path: the cube the features are read from (the scene's MNF
  // components); empty = the scene itself.
  std::string features_scene;
  // With mnf:N: statistics file (hyperbatch mnf --stats-only) whose basis is applied
  // instead of computing the scene's own (a campaign-wide basis).
  std::string mnf_stats;
  ClassifyOptions classify;
  std::int64_t train_chunk_rows = 0;  // training rows per search chunk; 0: the backend's (rank_training.cpp)
  std::int64_t train_cache_bytes = std::int64_t{1} << 30;  // above this, training streams from its source
  ShardMode shard_mode = ShardMode::automatic;  // several ranks: ring or allgather of the training shards
  // The ranks that share this job; null = every rank (the world). A job runner that gives
  // each rank its own scenes passes a one-rank communicator.
  const mpi::Comm* comm = nullptr;
};

struct KnnJobResult {
  RunReport report;
  std::optional<ReportPaths> report_paths;
};

using ProgressFn = std::function<void(std::int64_t, std::int64_t)>;

// Collective over job.comm (the world when null): one rank is the special case of many.
// Each rank draws the same split from its share of the truth raster (rank_draw.hpp),
// holds the features of its shard of the training rows (rank_training.hpp) and
// classifies a block of rows balanced by valid pixels. Reports come from the first rank
// with counts summed over ranks.
Result<KnnJobResult> run_knn_job(const KnnJob& job, const ProgressFn& progress = {});

// Scene rows per tile: --tile-rows, or from the memory budget.
std::int64_t job_tile_rows(const KnnJob& job, const io::CubeInfo& info, std::int64_t dims);

// The accuracy reports' files: --report BASE, or OUT_report beside the class map.
ReportPaths job_report_paths(const KnnJob& job);

// The report's description of the job (outputs, statistics and matrix filled later).
RunReport job_report(const KnnJob& job, const classify::TrainingSet& training, const io::Metadata& truth_meta,
                     std::int64_t training_rows);

}  // namespace hb::knn
