#include "src/knn/outputs.hpp"

#include <hdf5.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>

#include <fmt/core.h>

#include "mpi/agree.hpp"

namespace hb::knn {
namespace {

constexpr std::array<int, 3 * 12> kPalette{
    255, 0,   0,   0,   160, 0,   0,   0,   255, 255, 255, 0,   0,   255, 255, 255, 0,   255,
    176, 48,  96,  46,  139, 87,  160, 32,  240, 255, 127, 80,  127, 255, 212, 218, 112, 214};

io::CubeInfo product_info(const OutputRequest& r, io::DataType type, std::int64_t bands) {
  io::CubeInfo info;
  info.shape = {r.scene->shape.lines, r.scene->shape.samples, bands};
  info.type = type;
  info.meta.map_info = r.scene->meta.map_info;
  info.meta.coordinate_system_string = r.scene->meta.coordinate_system_string;
  info.meta.description = r.description;
  info.meta.source_file = r.scene_path;
  return info;
}

io::CubeInfo class_map_info(const OutputRequest& r) {
  auto info = product_info(r, io::DataType::u16, 1);
  info.meta.file_type = "ENVI Classification";
  info.meta.classes = static_cast<int>(r.classes.names.size());
  info.meta.class_names = r.classes.names;
  info.meta.class_lookup = r.classes.lookup;
  info.meta.band_names = {"class"};
  return info;
}

std::vector<std::string> numbered(const std::string& what, int k) {
  std::vector<std::string> names;
  for (int j = 1; j <= k; ++j) names.push_back(fmt::format("{} {}", what, j));
  return names;
}

// The products, in the order they are written: class map, confidence, neighbours.
struct Product {
  std::string name;  // HDF5 dataset in the merged file ("" for the class map)
  io::CubeInfo info;
};

std::vector<Product> products(const OutputRequest& r) {
  std::vector<Product> list{{"", class_map_info(r)}, {"confidence", product_info(r, io::DataType::f32, 1)}};
  list[1].info.meta.band_names = {"confidence"};
  if (r.neighbors) {
    list.push_back({"neighbors/index", product_info(r, io::DataType::i64, r.k)});
    list.back().info.meta.band_names = numbered("neighbor", r.k);
    list.back().info.meta.data_ignore_value = -1.0;
    list.push_back({"neighbors/distance", product_info(r, io::DataType::f32, r.k)});
    list.back().info.meta.band_names = numbered("distance", r.k);
  }
  return list;
}

template <class T>
std::span<const std::byte> bytes_of(std::span<const T> values) {
  return std::as_bytes(values);
}

// Writers for every product; `paths` say where each one is committed.
class ProductWriters {
 public:
  Status open(const std::vector<Product>& list, const std::vector<std::string>& paths, const mpi::Comm* comm) {
    io::WriteOptions options;
    options.comm = comm;
    for (std::size_t i = 0; i < list.size(); ++i) {
      auto w = io::create_cube(paths[i], list[i].info, options);
      if (!w) return w.error();
      writers_.push_back(std::move(*w));
    }
    return {};
  }
  Status write(const ClassifiedRows& rows) {
    HB_TRY(writers_[0]->write_rows(rows.rows, bytes_of(rows.labels)));
    HB_TRY(writers_[1]->write_rows(rows.rows, bytes_of(rows.confidence)));
    if (writers_.size() > 2) {
      HB_TRY(writers_[2]->write_rows(rows.rows, bytes_of(rows.neighbor_index)));
      HB_TRY(writers_[3]->write_rows(rows.rows, bytes_of(rows.neighbor_distance)));
    }
    return {};
  }
  // Auxiliary products first, the class map last: the map's presence means the run finished.
  Status commit() {
    for (std::size_t i = writers_.size(); i-- > 0;) HB_TRY(writers_[i]->commit());
    return {};
  }

 private:
  std::vector<std::unique_ptr<io::CubeWriter>> writers_;
};

class EnviOutputs final : public KnnOutputs {
 public:
  static Result<std::unique_ptr<KnnOutputs>> create(const OutputRequest& r) {
    auto out = std::make_unique<EnviOutputs>();
    const auto list = products(r);
    out->paths_ = {r.path, sibling_path(r.path, "_confidence")};
    if (r.neighbors) {
      out->paths_.push_back(sibling_path(r.path, "_neighbors_index"));
      out->paths_.push_back(sibling_path(r.path, "_neighbors_distance"));
    }
    HB_TRY(out->writers_.open(list, out->paths_, r.comm));
    return std::unique_ptr<KnnOutputs>(std::move(out));
  }
  Status write(const ClassifiedRows& rows) override { return writers_.write(rows); }
  Status commit() override { return writers_.commit(); }
  std::vector<std::string> paths() const override { return paths_; }

 private:
  ProductWriters writers_;
  std::vector<std::string> paths_;
};

// HDF5: each product is its own cube under a hidden name beside OUT; commit() copies
// the auxiliary /cube datasets into the class-map file and renames that into place.
class Hdf5Outputs final : public KnnOutputs {
 public:
  ~Hdf5Outputs() override {
    for (const auto& p : staged_) std::remove(p.c_str());
  }
  static Result<std::unique_ptr<KnnOutputs>> create(const OutputRequest& r) {
    auto out = std::make_unique<Hdf5Outputs>();
    out->final_ = r.path;
    out->list_ = products(r);
    out->comm_ = r.comm != nullptr && r.comm->is_parallel() ? r.comm : nullptr;
    // Staged names must be the same on every rank: rank 0's process id names them.
    std::int64_t pid[1] = {::getpid()};
    if (out->comm_ != nullptr) out->comm_->broadcast(pid);
    const std::filesystem::path final_path(r.path);
    for (const auto& product : out->list_) {
      const std::string tag = product.name.empty() ? "classes" : product.name.substr(product.name.rfind('/') + 1);
      const auto name = fmt::format(".{}.knn-{}-{}{}.h5", final_path.filename().string(), pid[0],
                                    product.name.rfind("neighbors", 0) == 0 ? "neighbors-" : "", tag);
      out->staged_.push_back((final_path.parent_path() / name).string());
    }
    HB_TRY(out->writers_.open(out->list_, out->staged_, out->comm_));
    return std::unique_ptr<KnnOutputs>(std::move(out));
  }
  Status write(const ClassifiedRows& rows) override { return writers_.write(rows); }
  Status commit() override {
    HB_TRY(writers_.commit());
    Status done;
    if (comm_ == nullptr || comm_->is_root()) {
      done = merge_products();
      if (done.ok() && std::rename(staged_[0].c_str(), final_.c_str()) != 0)
        done = io_error(final_, "cannot rename the class map into place");
    }
    if (comm_ != nullptr) done = mpi::agree(done, *comm_);
    HB_TRY(done);
    staged_.erase(staged_.begin());
    return {};
  }
  std::vector<std::string> paths() const override { return {final_}; }

 private:
  Status merge_products() {
    const hid_t target = H5Fopen(staged_[0].c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    if (target < 0) return io_error(staged_[0], "cannot reopen the class map to add the other products");
    const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    Status status;
    for (std::size_t i = 1; i < list_.size() && status.ok(); ++i) {
      const hid_t source = H5Fopen(staged_[i].c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
      if (source < 0 || H5Ocopy(source, "/cube", target, list_[i].name.c_str(), H5P_DEFAULT, lcpl) < 0)
        status = io_error(final_, "cannot copy /" + list_[i].name + " into the class map file");
      if (source >= 0) H5Fclose(source);
    }
    H5Pclose(lcpl);
    if (H5Fclose(target) < 0 && status.ok()) status = io_error(final_, "cannot close the class map file");
    return status;
  }

  std::string final_;
  const mpi::Comm* comm_ = nullptr;
  std::vector<Product> list_;
  std::vector<std::string> staged_;  // removed on destruction unless renamed
  ProductWriters writers_;
};

}  // namespace

std::string sibling_path(const std::string& path, const std::string& suffix) {
  const std::filesystem::path p(path);
  const auto ext = p.extension().string();
  if (ext.empty()) return path + suffix;
  return (p.parent_path() / (p.stem().string() + suffix + ext)).string();
}

ClassTable complete_class_table(const ClassTable& given, int count) {
  ClassTable t = given;
  t.names.resize(static_cast<std::size_t>(std::max<int>(count, static_cast<int>(t.names.size()))));
  for (std::size_t id = 0; id < t.names.size(); ++id)
    if (t.names[id].empty()) t.names[id] = id == 0 ? "Unclassified" : fmt::format("Class {}", id);
  const std::size_t want = 3 * t.names.size();
  if (t.lookup.size() > want) t.lookup.resize(want);
  for (std::size_t i = t.lookup.size(); i < want; ++i) {
    const std::size_t id = i / 3;
    t.lookup.push_back(id == 0 ? 0 : kPalette[((id - 1) * 3 + i % 3) % kPalette.size()]);
  }
  return t;
}

Result<std::unique_ptr<KnnOutputs>> create_knn_outputs(const OutputRequest& request) {
  if (io::format_from_path(request.path) == io::CubeFormat::hdf5) return Hdf5Outputs::create(request);
  return EnviOutputs::create(request);
}

}  // namespace hb::knn
