// The per-scene steps a job can run, as a table: each step says whether the job asks
// for it, what its checksum covers, and how to run it on one scene. The runner knows
// nothing step-specific; a new step (SAM) is one more entry in scene_steps().
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/error.hpp"
#include "jobs/job_file.hpp"
#include "mpi/comm.hpp"

namespace hb::jobs {

// What a step sees of its scene.
struct SceneContext {
  const JobSpec& job;
  const SceneSpec& scene;
  std::string output_dir;      // the job's output folder
  std::string scene_dir;       // OUTPUT/scenes/NAME
  std::string campaign_stats;  // campaign MNF statistics file, when the job has one
  std::function<void(double fraction)> progress;  // within this step, 0..1
  // The ranks that process this scene together (a scene above large_scene_mb: rows dealt
  // over every rank); null = this rank alone.
  const mpi::Comm* ranks = nullptr;

  std::string file(const std::string& name) const;  // SCENE_DIR/NAME
  // The cube later steps read: the ingested HDF5 copy when the job ingests, else the scene.
  std::string cube() const;
  mpi::Comm comm() const { return ranks != nullptr ? *ranks : mpi::Comm::self(); }
};

struct StepOutcome {
  std::vector<std::string> outputs;  // absolute paths of files written
  std::int64_t bytes_read = 0;
  std::int64_t pixels = 0;
  nlohmann::json summary;            // kept in the manifest; the report reads it
};

struct Step {
  std::string name;
  std::function<bool(const JobSpec&, const SceneSpec&)> wanted;
  // Canonical text of the parameters that change the step's outputs.
  std::function<std::string(const JobSpec&)> parameters;
  // Files other than the scene whose change must redo the step (truth, training, library).
  std::function<std::vector<std::string>(const SceneContext&)> extra_inputs;
  std::function<Result<StepOutcome>(const SceneContext&)> run;
  // False for a step the job language knows but this build cannot run: a job asking
  // for it stops before any work, not scene by scene.
  bool available = true;
  // Runs on every rank of a shared scene (its rows dealt over them); steps that are not
  // distributed run on rank 0 alone while the others wait.
  bool distributed = false;
};

// In the order they run on a scene: generate, ingest, mnf, knn, sam, ortho, quicklooks.
const std::vector<Step>& scene_steps();

// Bytes of a written output: a header's data file counts with it.
std::int64_t output_bytes(const std::string& path);

}  // namespace hb::jobs
