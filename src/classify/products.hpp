// Classifier outputs as a set of cubes written together, through io::create_cube so that
// every format the project reads is also written. Shared by `knn` and `sam`:
//   ENVI  the main product at OUT, every other one at a sibling NAME<suffix>.
//   HDF5  OUT.h5 with the main product at /cube and the others at their dataset names
//         (each is written as its own cube beside OUT, then copied into the main file
//         with H5Ocopy before that file is renamed into place).
// Nothing appears under a final name until commit(); the main product is committed
// last, so its presence means the run finished.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "io/cube.hpp"
#include "mpi/comm.hpp"
#include "src/classify/class_table.hpp"

namespace hb::classify {

// NAME.hdr -> NAME_suffix.hdr, NAME.img -> NAME_suffix.img, NAME -> NAME_suffix, NAME.h5 -> NAME_suffix.h5.
std::string sibling_path(const std::string& path, const std::string& suffix);

struct Product {
  std::string hdf5_name;    // dataset in the HDF5 file ("" for the main product, /cube)
  std::string envi_suffix;  // ENVI sibling suffix ("" for the main product)
  io::CubeInfo info;
};

class ProductFiles {
 public:
  virtual ~ProductFiles() = default;
  // `rows` of product `index` (in the order given to create), canonical layout.
  virtual Status write(std::size_t index, RowRange rows, std::span<const std::byte> data) = 0;
  // Everything that can fail before the products appear (see io::CubeWriter::close).
  virtual Status close() = 0;
  virtual Status commit() = 0;  // close() when not yet done, then the renames
  virtual std::vector<std::string> paths() const = 0;  // final names
  // ENVI files take each write as pwrite of disjoint rows, from any thread; HDF5 ones
  // only from the thread that opened them (the library is not thread-safe here).
  virtual bool writes_from_any_thread() const { return false; }
};

// `products[0]` is the main product; `tag` names the hidden HDF5 staging files. With a
// parallel `comm`, every rank writes its rows into the same files (collectively: every
// rank must make the same calls) and rank 0 assembles and renames.
Result<std::unique_ptr<ProductFiles>> create_product_files(const std::string& path, std::vector<Product> products,
                                                           const std::string& tag, const mpi::Comm* comm = nullptr);

}  // namespace hb::classify
