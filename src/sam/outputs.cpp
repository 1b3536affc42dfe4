#include "src/sam/outputs.hpp"

#include <fmt/core.h>

namespace hb::sam {
namespace {

constexpr const char* kScoreDataset = "score";
constexpr const char* kScoreSuffix = "_score";

}  // namespace

void plan_sam_outputs(io::FilePlan& plan, const std::string& output, const std::string& rules) {
  plan.write_cube("-o", output);
  if (io::format_from_path(output) == io::CubeFormat::envi)
    plan.write_cube("-o", classify::sibling_path(output, kScoreSuffix));
  plan.write_cube("--rules", rules);
}

Result<SamOutputs> SamOutputs::create(const std::string& output, const std::string& rules, const io::CubeInfo& scene,
                                      const std::string& scene_path, const ResampledLibrary& library, Method method,
                                      const mpi::Comm* comm) {
  const std::string what = method == Method::sam ? "spectral angle (radians)" : "spectral correlation";
  const std::string description =
      fmt::format("hyperbatch sam of {} ({} against {} reference spectra)", scene_path, what, library.count());
  classify::ClassTable given;
  given.names.push_back("Unclassified");
  given.names.insert(given.names.end(), library.names.begin(), library.names.end());
  if (!library.lookup.empty()) {
    given.lookup = {0, 0, 0};
    given.lookup.insert(given.lookup.end(), library.lookup.begin(), library.lookup.end());
  }
  const auto classes = classify::complete_class_table(given, static_cast<int>(library.count() + 1));
  std::vector<classify::Product> products{
      {"", "", classify::class_map_info(scene, scene_path, description, classes)},
      {kScoreDataset, kScoreSuffix, classify::product_info(scene, scene_path, description, DataType::f32, 1)}};
  products[1].info.meta.band_names = {method == Method::sam ? "best angle" : "best correlation"};
  SamOutputs out;
  if (!rules.empty()) {
    auto info = classify::product_info(scene, scene_path, description, DataType::f32, library.count());
    info.meta.band_names = library.names;
    io::WriteOptions options;
    options.comm = comm;
    auto writer = io::create_cube(rules, info, options);
    if (!writer) return writer.error();
    out.rules_ = std::move(*writer);
    out.rules_path_ = rules;
  }
  auto files = classify::create_product_files(output, std::move(products), "sam", comm);
  if (!files) return files.error();
  out.classes_ = std::move(*files);
  return out;
}

Status SamOutputs::write(RowRange rows, std::span<const std::uint16_t> labels, const TileScores& scores) {
  HB_TRY(classes_->write(0, rows, std::as_bytes(labels)));
  HB_TRY(classes_->write(1, rows, std::as_bytes(std::span<const float>(scores.best_score))));
  if (rules_) HB_TRY(rules_->write_rows(rows, std::as_bytes(std::span<const float>(scores.scores))));
  return {};
}

// Both files are finished before either appears; the class map, whose presence means
// the run finished, is renamed last.
Status SamOutputs::commit() {
  if (rules_) HB_TRY(rules_->close());
  HB_TRY(classes_->close());
  if (rules_) HB_TRY(rules_->commit());
  return classes_->commit();
}

std::vector<std::string> SamOutputs::paths() const {
  auto paths = classes_->paths();
  if (rules_) paths.push_back(rules_path_);
  return paths;
}

}  // namespace hb::sam
