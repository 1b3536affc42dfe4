// MNF/PCA statistics on disk (HDF5), so a transform can be inspected and re-applied:
// group /mnf (or /pca) holding
//   eigenvalues [r] (all, descending), transform [bands x m] float64 (selected
//   components), mean [bands], data_covariance and noise_covariance [bands x bands],
//   bands [bands] (scene band indices used), excluded_bands,
// and attributes method, noise_estimator, scene_bands, data_pixels, noise_pixels,
// excluded_pixels, backend, source_file. Covariances are those the basis was built
// from (noise already scaled, see noise_covariance_scale).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/base/error.hpp"
#include "src/linalg/matrix.hpp"
#include "src/mnf/basis.hpp"
#include "src/mnf/stats.hpp"

namespace hb::mnf {

struct StatsRecord {
  Method method = Method::mnf;
  NoiseEstimator estimator = kDefaultNoiseEstimator;
  std::int64_t scene_bands = 0;
  std::vector<std::int64_t> bands;
  std::vector<std::int64_t> excluded_bands;
  std::vector<double> mean;
  linalg::Matrix data_covariance;
  linalg::Matrix noise_covariance;  // MNF only
  std::vector<double> eigenvalues;
  linalg::Matrix transform;         // [bands x m]
  std::int64_t data_pixels = 0;
  std::int64_t noise_pixels = 0;
  std::int64_t excluded_pixels = 0;
  std::string backend;
  std::string source_file;
};

// Creates `path` holding only the statistics group; the file appears complete or not at all.
Status write_stats_file(const std::string& path, const StatsRecord& record);
// Adds the statistics group to the HDF5 file `file` (the components cube's temporary,
// before it is renamed to `output`, which errors name), plus a soft link
// /components -> /cube when the file has a /cube dataset.
Status add_stats_group(const std::string& file, const std::string& output, const StatsRecord& record);
// Reads the /mnf or /pca group of `path`.
Result<StatsRecord> read_stats_file(const std::string& path);

}  // namespace hb::mnf
