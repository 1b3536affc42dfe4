#include "src/classify/products.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <fmt/core.h>

#include "io/atomic_file.hpp"
#include "io/hdf5_handle.hpp"
#include "mpi/agree.hpp"

namespace hb::classify {
namespace {

// Writers for every product; `paths` say where each one is committed.
class ProductWriters {
 public:
  Status open(const std::vector<Product>& list, const std::vector<std::string>& paths, const mpi::Comm* comm,
              const std::string& reported_as = {}) {
    io::WriteOptions options;
    options.comm = comm;
    options.reported_as = reported_as;
    for (std::size_t i = 0; i < list.size(); ++i) {
      auto w = io::create_cube(paths[i], list[i].info, options);
      if (!w) return w.error();
      writers_.push_back(std::move(*w));
    }
    return {};
  }
  Status write(std::size_t index, RowRange rows, std::span<const std::byte> data) {
    return writers_.at(index)->write_rows(rows, data);
  }
  Status close() {
    for (auto& writer : writers_) HB_TRY(writer->close());
    return {};
  }
  // Auxiliary products first, the main one last: its presence means the run finished.
  Status commit() {
    HB_TRY(close());
    for (std::size_t i = writers_.size(); i-- > 0;) HB_TRY(writers_[i]->commit());
    return {};
  }

 private:
  std::vector<std::unique_ptr<io::CubeWriter>> writers_;
};

class EnviFiles final : public ProductFiles {
 public:
  static Result<std::unique_ptr<ProductFiles>> create(const std::string& path, const std::vector<Product>& list,
                                                      const mpi::Comm* comm) {
    auto out = std::make_unique<EnviFiles>();
    for (const auto& product : list)
      out->paths_.push_back(product.envi_suffix.empty() ? path : sibling_path(path, product.envi_suffix));
    HB_TRY(out->writers_.open(list, out->paths_, comm));
    return std::unique_ptr<ProductFiles>(std::move(out));
  }
  Status write(std::size_t index, RowRange rows, std::span<const std::byte> data) override {
    return writers_.write(index, rows, data);
  }
  Status close() override { return writers_.close(); }
  Status commit() override { return writers_.commit(); }
  bool writes_from_any_thread() const override { return true; }
  std::vector<std::string> paths() const override { return paths_; }

 private:
  ProductWriters writers_;
  std::vector<std::string> paths_;
};

// HDF5: each product is its own cube under a hidden name beside OUT; commit() copies
// the auxiliary /cube datasets into the main file and renames that into place.
class Hdf5Files final : public ProductFiles {
 public:
  ~Hdf5Files() override {
    for (const auto& p : staged_) {
      std::remove(p.c_str());
      io::untrack_temporary(p);
    }
  }
  static Result<std::unique_ptr<ProductFiles>> create(const std::string& path, std::vector<Product> list,
                                                      const std::string& tag, const mpi::Comm* comm) {
    auto out = std::make_unique<Hdf5Files>();
    out->final_ = path;
    out->list_ = std::move(list);
    out->comm_ = comm != nullptr && comm->is_parallel() ? comm : nullptr;
    // Staged names must be the same on every rank: rank 0's temporaries name them.
    for (const auto& product : out->list_) {
      std::string name = product.hdf5_name.empty() ? "classes" : product.hdf5_name;
      std::replace(name.begin(), name.end(), '/', '-');
      std::string staged = io::temporary_path(path, fmt::format("{}-{}.h5", tag, name));
      if (out->comm_ != nullptr) staged = out->comm_->broadcast(staged);
      io::track_temporary(staged);
      out->staged_.push_back(std::move(staged));
    }
    HB_TRY(out->writers_.open(out->list_, out->staged_, out->comm_, path));
    return std::unique_ptr<ProductFiles>(std::move(out));
  }
  Status write(std::size_t index, RowRange rows, std::span<const std::byte> data) override {
    return writers_.write(index, rows, data);
  }
  // The staged cubes take their (hidden) names and rank 0 merges them into the first.
  Status close() override {
    if (merged_) return {};
    HB_TRY(writers_.commit());
    Status done;
    if (comm_ == nullptr || comm_->is_root()) done = merge_products();
    if (comm_ != nullptr) done = mpi::agree(done, *comm_);
    HB_TRY(done);
    merged_ = true;
    return {};
  }
  Status commit() override {
    HB_TRY(close());
    Status done;
    if ((comm_ == nullptr || comm_->is_root()) && std::rename(staged_[0].c_str(), final_.c_str()) != 0)
      done = io_error(final_, "cannot rename the class map into place");
    if (comm_ != nullptr) done = mpi::agree(done, *comm_);
    HB_TRY(done);
    io::untrack_temporary(staged_.front());
    staged_.erase(staged_.begin());
    return {};
  }
  std::vector<std::string> paths() const override { return {final_}; }

 private:
  Status merge_products() {
    // Reopening and copying take some space of their own: a full disk is named as such.
    constexpr std::size_t kRoom = std::size_t{1} << 20;
    const hid_t target = H5Fopen(staged_[0].c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    if (target < 0)
      return io_error(final_, "cannot reopen the class map to add the other products: " +
                                  io::h5::hdf5_error_detail(staged_[0], kRoom));
    const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    Status status;
    for (std::size_t i = 1; i < list_.size() && status.ok(); ++i) {
      const hid_t source = H5Fopen(staged_[i].c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
      if (source < 0 || H5Ocopy(source, "/cube", target, list_[i].hdf5_name.c_str(), H5P_DEFAULT, lcpl) < 0)
        status = io_error(final_, "cannot copy /" + list_[i].hdf5_name +
                                      " into the class map file: " + io::h5::hdf5_error_detail(staged_[0], kRoom));
      if (source >= 0) H5Fclose(source);
    }
    H5Pclose(lcpl);
    const bool closed = H5Fclose(target) >= 0;
    if (!closed) io::h5::note_failed_file_close();
    if (!closed && status.ok())
      status = io_error(final_, "cannot close the class map file: " + io::h5::hdf5_error_detail(staged_[0], kRoom));
    return status;
  }

  std::string final_;
  const mpi::Comm* comm_ = nullptr;
  std::vector<Product> list_;
  std::vector<std::string> staged_;  // removed on destruction unless renamed
  ProductWriters writers_;
  bool merged_ = false;
};

}  // namespace

std::string sibling_path(const std::string& path, const std::string& suffix) {
  const std::filesystem::path p(path);
  const auto ext = p.extension().string();
  if (ext.empty()) return path + suffix;
  return (p.parent_path() / (p.stem().string() + suffix + ext)).string();
}

Result<std::unique_ptr<ProductFiles>> create_product_files(const std::string& path, std::vector<Product> products,
                                                           const std::string& tag, const mpi::Comm* comm) {
  if (io::format_from_path(path) == io::CubeFormat::hdf5)
    return Hdf5Files::create(path, std::move(products), tag, comm);
  return EnviFiles::create(path, products, comm);
}

}  // namespace hb::classify
