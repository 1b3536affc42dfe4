// The accuracy report of a `knn` run, in JSON (for machines and the oracle tests) and
// Markdown (for people), and the exported training/evaluation split.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/base/error.hpp"
#include "src/classify/accuracy.hpp"
#include "src/classify/sampling.hpp"
#include "src/classify/training.hpp"
#include "src/knn/classify.hpp"

namespace hb::knn {

struct RunReport {
  std::string scene;
  std::string truth;     // empty without --truth
  std::string training;  // "truth raster" or the training file
  std::vector<std::string> outputs;
  std::string features;
  ClassifyOptions options;
  classify::SplitOptions split;  // meaningful when training came from the truth raster
  bool split_from_truth = false;
  ClassifyStats stats;
  std::int64_t training_rows = 0;
  classify::ClassTable classes;
  std::optional<classify::ConfusionMatrix> matrix;  // absent without evaluation pixels
};

nlohmann::json report_json(const RunReport& report);
std::string report_markdown(const RunReport& report);

// BASE.json + BASE.md where BASE is `path` without a .json/.md extension.
struct ReportPaths {
  std::string json;
  std::string markdown;
};
ReportPaths report_paths(const std::string& path);

Status write_reports(const RunReport& report, const ReportPaths& paths);

// {"scene", "truth", "lines", "samples", "seed", "train_pixels", "train_labels", "eval_pixels"}
Status write_split(const std::string& path, const RunReport& report, const io::CubeShape& shape,
                   const std::vector<std::int64_t>& train_pixels, const std::vector<std::uint16_t>& train_labels,
                   const std::vector<std::int64_t>& eval_pixels);

}  // namespace hb::knn
