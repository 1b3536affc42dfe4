// A cube read through another one: the same rows under other metadata (calibration
// found beside the scene), or, in subclasses, the rows converted (io/units.hpp).
#pragma once

#include <memory>

#include "io/cube.hpp"

namespace hb::io {

class CubeView : public Cube {
 public:
  CubeView(std::unique_ptr<Cube> inner, CubeInfo info) : inner_(std::move(inner)), info_(std::move(info)) {}

  const CubeInfo& info() const override { return info_; }
  const std::string& path() const override { return inner_->path(); }
  CubeFormat format() const override { return inner_->format(); }
  std::int64_t bytes_on_disk() const override { return inner_->bytes_on_disk(); }
  Status read_rows(RowRange rows, std::span<std::byte> out) const override { return inner_->read_rows(rows, out); }
  bool compressed() const override { return inner_->compressed(); }
  bool reads_through_hdf5() const override { return inner_->reads_through_hdf5(); }

 protected:
  const Cube& inner() const { return *inner_; }

 private:
  std::unique_ptr<Cube> inner_;
  CubeInfo info_;
};

}  // namespace hb::io
