#include "src/knn/report.hpp"

#include <cmath>
#include <filesystem>

#include <fmt/core.h>

#include "io/text_file.hpp"

namespace hb::knn {
namespace {

nlohmann::json number_or_null(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }

std::string class_name(const RunReport& r, int id) {
  return id < static_cast<int>(r.classes.names.size()) ? r.classes.names[static_cast<std::size_t>(id)]
                                                       : fmt::format("Class {}", id);
}

std::string percent(double x) { return std::isfinite(x) ? fmt::format("{:.2f}", 100.0 * x) : "n/a"; }

nlohmann::json accuracy_json(const RunReport& r) {
  const auto s = classify::summarize(*r.matrix);
  nlohmann::json j;
  j["evaluation_pixels"] = s.total;
  j["overall_accuracy"] = number_or_null(s.overall);
  j["kappa"] = number_or_null(s.kappa);
  j["class_ids"] = s.ids;
  nlohmann::json per_class = nlohmann::json::array();
  for (const auto& c : s.per_class)
    per_class.push_back({{"id", c.id},
                         {"name", class_name(r, c.id)},
                         {"truth_pixels", c.truth_count},
                         {"predicted_pixels", c.predicted_count},
                         {"correct", c.correct},
                         {"producers_accuracy", number_or_null(c.producers)},
                         {"users_accuracy", number_or_null(c.users)}});
  j["per_class"] = per_class;
  nlohmann::json rows = nlohmann::json::array();  // rows = truth, columns = predicted, over class_ids
  for (const int t : s.ids) {
    nlohmann::json row = nlohmann::json::array();
    for (const int p : s.ids) row.push_back(r.matrix->at(t, p));
    rows.push_back(row);
  }
  j["confusion_matrix"] = rows;
  return j;
}

}  // namespace

nlohmann::json report_json(const RunReport& r) {
  nlohmann::json j;
  j["scene"] = r.scene;
  j["truth"] = r.truth;
  j["training"] = r.training;
  j["outputs"] = r.outputs;
  j["k"] = r.options.k;
  j["metric"] = metric_name(r.options.metric);
  j["weights"] = weights_name(r.options.weights);
  j["features"] = r.features;
  j["select_requested"] = select_method_name(r.options.select);
  j["select_used"] = select_method_name(r.stats.select);
  j["backend"] = r.stats.backend;
  j["training_rows"] = r.training_rows;
  if (r.split_from_truth) {
    j["seed"] = r.split.seed;
    j["train_fraction"] = r.split.fraction ? nlohmann::json(*r.split.fraction) : nlohmann::json();
    j["train_per_class"] = r.split.per_class ? nlohmann::json(*r.split.per_class) : nlohmann::json();
  }
  j["classified_pixels"] = r.stats.classified;
  j["ignored_pixels"] = r.stats.ignored;
  j["tile_rows"] = r.stats.tile_rows;
  j["seconds"] = r.stats.seconds;
  j["accuracy"] = r.matrix ? accuracy_json(r) : nlohmann::json();
  return j;
}

std::string report_markdown(const RunReport& r) {
  std::string md = fmt::format("# KNN classification of `{}`\n\n", r.scene);
  md += fmt::format("- k = {}, metric {}, weights {}, features {}\n", r.options.k, metric_name(r.options.metric),
                    weights_name(r.options.weights), r.features);
  md += fmt::format("- k-selection {} (requested {}), backend {}\n", select_method_name(r.stats.select),
                    select_method_name(r.options.select), r.stats.backend);
  md += fmt::format("- training: {} rows from {}\n", r.training_rows, r.training);
  md += fmt::format("- pixels classified {}, ignored {}, in {:.2f} s\n\n", r.stats.classified, r.stats.ignored,
                    r.stats.seconds);
  if (!r.matrix) return md + "No evaluation pixels: accuracy not assessed.\n";
  const auto s = classify::summarize(*r.matrix);
  md += fmt::format("## Accuracy on {} evaluation pixels\n\n", s.total);
  md += fmt::format("- overall accuracy: {} %\n", percent(s.overall));
  md += fmt::format("- Cohen's kappa: {}\n\n", std::isfinite(s.kappa) ? fmt::format("{:.4f}", s.kappa) : "n/a");
  md += "| id | class | truth pixels | predicted | producer's % | user's % |\n|---|---|---|---|---|---|\n";
  for (const auto& c : s.per_class)
    md += fmt::format("| {} | {} | {} | {} | {} | {} |\n", c.id, class_name(r, c.id), c.truth_count, c.predicted_count,
                      percent(c.producers), percent(c.users));
  md += "\n## Confusion matrix (rows: truth, columns: predicted)\n\n| truth \\ predicted |";
  for (const int p : s.ids) md += fmt::format(" {} |", p);
  md += "\n|---|";
  for (std::size_t i = 0; i < s.ids.size(); ++i) md += "---|";
  md += "\n";
  for (const int t : s.ids) {
    md += fmt::format("| {} {} |", t, class_name(r, t));
    for (const int p : s.ids) md += fmt::format(" {} |", r.matrix->at(t, p));
    md += "\n";
  }
  return md;
}

ReportPaths report_paths(const std::string& path) {
  std::filesystem::path p(path);
  if (p.extension() == ".json" || p.extension() == ".md") p.replace_extension();
  return {p.string() + ".json", p.string() + ".md"};
}

Status write_reports(const RunReport& report, const ReportPaths& paths) {
  HB_TRY(io::write_text_file(paths.json, report_json(report).dump(2) + "\n"));
  return io::write_text_file(paths.markdown, report_markdown(report));
}

Status write_split(const std::string& path, const RunReport& report, const io::CubeShape& shape,
                   const std::vector<std::int64_t>& train_pixels, const std::vector<std::uint16_t>& train_labels,
                   const std::vector<std::int64_t>& eval_pixels) {
  nlohmann::json j;
  j["scene"] = report.scene;
  j["truth"] = report.truth;
  j["lines"] = shape.lines;
  j["samples"] = shape.samples;
  j["pixel_index"] = "line * samples + sample";
  j["seed"] = report.split.seed;
  j["train_pixels"] = train_pixels;
  j["train_labels"] = train_labels;
  j["eval_pixels"] = eval_pixels;
  return io::write_text_file(path, j.dump() + "\n");
}

}  // namespace hb::knn
