// Delivery archives (.tar.gz, one flightline each) named by a collection. Before the
// run, rank 0 reads every archive through (a truncated or corrupt one is bad input:
// the run stops before anything is written). While a scene's steps run, the rank that
// runs them unpacks the scene's image, header and calibration files into node-local
// scratch ($TMPDIR, else /tmp) and removes them when the steps are done.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "jobs/job_file.hpp"
#include "mpi/comm.hpp"
#include "src/base/error.hpp"

namespace hb::jobs {

Status check_deliveries(const std::vector<SceneSpec>& scenes, const mpi::Comm& comm);

// A listed scene with its path moved into scratch for as long as this lives.
class UnpackedScene {
 public:
  UnpackedScene(SceneSpec scene, std::string folder) : scene_(std::move(scene)), folder_(std::move(folder)) {}
  ~UnpackedScene();
  UnpackedScene(const UnpackedScene&) = delete;
  UnpackedScene& operator=(const UnpackedScene&) = delete;
  const SceneSpec& scene() const { return scene_; }

 private:
  SceneSpec scene_;
  std::string folder_;
};

// nullptr for a scene that is not an archive. `job_output` and `rank` make the scratch
// folder unique to this run's scene on this rank (and the same path on every rerun, so
// outputs that record their input are the same bytes).
Result<std::unique_ptr<UnpackedScene>> unpack_scene(const SceneSpec& listed, const std::string& job_output, int rank);

}  // namespace hb::jobs
