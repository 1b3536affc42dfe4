// `hyperbatch mnf` / `hyperbatch pca` end to end: open the scene, gather statistics
// (or read them back with --apply), build the basis, write components, statistics
// and optionally the denoised scene.
#pragma once

#include <string>
#include <vector>

#include "mpi/comm.hpp"
#include "src/backend/backend.hpp"
#include "src/mnf/pipeline.hpp"

namespace hb::mnf {

struct RunOptions {
  std::string scene;
  std::vector<std::string> more_scenes;  // campaign mode (--stats-only): one basis for all scenes
  std::string output;          // components cube (.h5 or ENVI .hdr), or the stats file with stats_only
  std::string denoise_output;  // MNF only; empty = none
  std::string apply_stats;     // statistics file to apply instead of gathering
  bool stats_only = false;
  PipelineOptions pipeline;
  Selection selection;
  BasisOptions basis;
  BackendKind backend = BackendKind::automatic;
};

// Where the statistics of an ENVI components output go: NAME.stats.h5 beside NAME.hdr.
std::string sidecar_stats_path(const std::string& output);

Status run(const RunOptions& options, const mpi::Comm& comm);

}  // namespace hb::mnf
