#include "src/knn/outputs.hpp"

#include <fmt/core.h>

namespace hb::knn {
namespace {

std::vector<std::string> numbered(const std::string& what, int k) {
  std::vector<std::string> names;
  for (int j = 1; j <= k; ++j) names.push_back(fmt::format("{} {}", what, j));
  return names;
}

// The auxiliary products' names, and the option that asks for each (for plan_knn_outputs).
struct AuxiliaryName {
  const char* hdf5_name;
  const char* envi_suffix;
  const char* option;
};
constexpr AuxiliaryName kConfidence{"confidence", "_confidence", "-o"};
constexpr AuxiliaryName kNeighborIndex{"neighbors/index", "_neighbors_index", "--neighbors"};
constexpr AuxiliaryName kNeighborDistance{"neighbors/distance", "_neighbors_distance", "--neighbors"};

// The products, in the order they are written: class map, confidence, neighbours.
std::vector<classify::Product> products(const OutputRequest& r) {
  const auto info = [&](DataType type, std::int64_t bands) {
    return classify::product_info(*r.scene, r.scene_path, r.description, type, bands);
  };
  std::vector<classify::Product> list{
      {"", "", classify::class_map_info(*r.scene, r.scene_path, r.description, r.classes)},
      {kConfidence.hdf5_name, kConfidence.envi_suffix, info(DataType::f32, 1)}};
  list[1].info.meta.band_names = {"confidence"};
  if (r.neighbors) {
    list.push_back({kNeighborIndex.hdf5_name, kNeighborIndex.envi_suffix, info(DataType::i64, r.k)});
    list.back().info.meta.band_names = numbered("neighbor", r.k);
    list.back().info.meta.data_ignore_value = -1.0;
    list.push_back({kNeighborDistance.hdf5_name, kNeighborDistance.envi_suffix, info(DataType::f32, r.k)});
    list.back().info.meta.band_names = numbered("distance", r.k);
  }
  return list;
}

class Outputs final : public KnnOutputs {
 public:
  Outputs(std::unique_ptr<classify::ProductFiles> files, bool neighbors)
      : files_(std::move(files)), neighbors_(neighbors) {}
  // Every product is written on every call, empty rows included: writes may be collective.
  Status write(const ClassifiedRows& rows) override {
    HB_TRY(files_->write(0, rows.rows, std::as_bytes(rows.labels)));
    HB_TRY(files_->write(1, rows.rows, std::as_bytes(rows.confidence)));
    if (neighbors_) {
      HB_TRY(files_->write(2, rows.rows, std::as_bytes(rows.neighbor_index)));
      HB_TRY(files_->write(3, rows.rows, std::as_bytes(rows.neighbor_distance)));
    }
    return {};
  }
  Status commit() override { return files_->commit(); }
  std::vector<std::string> paths() const override { return files_->paths(); }
  SinkThread sink_thread() const override {
    return files_->writes_from_any_thread() ? SinkThread::any : SinkThread::caller;
  }

 private:
  std::unique_ptr<classify::ProductFiles> files_;
  bool neighbors_;
};

}  // namespace

void plan_knn_outputs(io::FilePlan& plan, const std::string& path, bool neighbors) {
  plan.write_cube("-o", path);
  if (io::format_from_path(path) == io::CubeFormat::hdf5) return;  // every product inside OUT.h5
  std::vector<AuxiliaryName> auxiliary{kConfidence};
  if (neighbors) auxiliary.insert(auxiliary.end(), {kNeighborIndex, kNeighborDistance});
  for (const auto& name : auxiliary) plan.write_cube(name.option, classify::sibling_path(path, name.envi_suffix));
}

Result<std::unique_ptr<KnnOutputs>> create_knn_outputs(const OutputRequest& request) {
  auto files = classify::create_product_files(request.path, products(request), "knn", request.comm);
  if (!files) return files.error();
  return std::unique_ptr<KnnOutputs>(std::make_unique<Outputs>(std::move(*files), request.neighbors));
}

}  // namespace hb::knn
