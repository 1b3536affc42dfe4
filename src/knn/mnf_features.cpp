#include "src/knn/mnf_features.hpp"

#include <spdlog/spdlog.h>

#include <filesystem>

#include "mpi/comm.hpp"
#include "src/mnf/run.hpp"

namespace hb::knn {

Result<KnnJobResult> run_on_mnf_components(const KnnJob& job, const mpi::Comm& comm, const ProgressFn& progress) {
  namespace fs = std::filesystem;
  const fs::path output(job.output);
  const auto components = (output.parent_path() / ("." + output.stem().string() + ".mnf-features.h5")).string();

  mnf::RunOptions mnf;
  mnf.scene = job.scene;
  mnf.output = components;
  mnf.selection.components = job.features.components;
  mnf.apply_stats = job.mnf_stats;
  mnf.backend = job.classify.backend;
  spdlog::info("knn: features are the first {} MNF components of {}", job.features.components, job.scene);
  HB_TRY(mnf::run(mnf, comm));

  KnnJob on_components = job;
  on_components.features_scene = components;
  on_components.comm = &comm;
  auto result = run_knn_job(on_components, progress);
  if (comm.is_root()) {  // every rank is past the classification's last agreement
    std::error_code ignored;
    fs::remove(components, ignored);
  }
  return result;
}

}  // namespace hb::knn
