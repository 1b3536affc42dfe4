// Campaign mode: `hyperbatch mnf --stats-only SCENE1 SCENE2 ... -o STATS.h5` gives one
// basis for a whole collection. Scenes are dealt to ranks (scene i to rank i mod P);
// each rank gathers the statistics of its scenes alone (one scene per process: no
// collective I/O), then rank 0 receives every scene's moments and sums them in scene
// order, re-centred on scene 0's provisional mean: the same bits for any rank count.
// `--apply STATS.h5` then uses the basis per scene. With a band target
// (`--resample-to SCENE`, io/resample_view.hpp) every scene is read on its bands.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "mpi/comm.hpp"
#include "src/mnf/pipeline.hpp"

namespace hb::mnf {

// Σ of scenes' statistics, each held by one rank (`holders[i]` holds scene i; `mine`:
// this rank's, by index): rank 0 adds them one scene at a time in index order, each
// sent by its holder and re-centred on scene 0's provisional mean, so the sum is the
// same bits for any rank count and any placement of the scenes. On every rank, with
// scene 0's bands; `scenes` names them in messages (a scene of other bands is bad input).
Result<SceneStatistics> sum_in_scene_order(const std::vector<int>& holders,
                                           const std::map<std::size_t, SceneStatistics>& mine,
                                           const std::vector<std::string>& scenes, const PipelineOptions& options,
                                           const mpi::Comm& comm);

// The statistics of all `scenes` together, on every rank (rules and bands of scene 0;
// every scene must have the same bands and bad-band list).
Result<SceneStatistics> campaign_statistics(const std::vector<std::string>& scenes, TileOps& ops,
                                            const PipelineOptions& options, const mpi::Comm& comm);

}  // namespace hb::mnf
