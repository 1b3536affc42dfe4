// The files `knn` writes (through src/classify/products.hpp):
//   ENVI  OUT(.hdr)               class map, uint16, ENVI Classification (names, colours)
//         OUT_confidence          float32, the winner's share of the vote
//         OUT_neighbors_index     int64, k bands: training indices (-1 where ignored)
//         OUT_neighbors_distance  float32, k bands: metric distances (NaN where ignored)
//   HDF5  OUT.h5 with /cube (class map), /confidence, /neighbors/index, /neighbors/distance
//         (each product is written as its own cube beside OUT, then copied into the
//         class-map file with H5Ocopy before that file is renamed into place).
// Nothing appears under a final name until commit().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/cube.hpp"
#include "io/file_identity.hpp"
#include "mpi/comm.hpp"
#include "src/classify/products.hpp"
#include "src/classify/training.hpp"
#include "src/knn/classify.hpp"

namespace hb::knn {

struct OutputRequest {
  std::string path;          // OUT
  const io::CubeInfo* scene = nullptr;
  std::string scene_path;
  classify::ClassTable classes;  // complete (see complete_class_table)
  int k = 1;
  bool neighbors = false;
  std::string description;   // what produced the map, for the header
  const mpi::Comm* comm = nullptr;  // several ranks: every rank writes its rows into the same files
};

class KnnOutputs {
 public:
  virtual ~KnnOutputs() = default;
  virtual Status write(const ClassifiedRows& rows) = 0;
  virtual Status commit() = 0;
  virtual std::vector<std::string> paths() const = 0;  // final names
  virtual SinkThread sink_thread() const = 0;          // where write() may be called
};

Result<std::unique_ptr<KnnOutputs>> create_knn_outputs(const OutputRequest& request);

// Adds the final files create_knn_outputs writes for OUT to `plan`.
void plan_knn_outputs(io::FilePlan& plan, const std::string& path, bool neighbors);

}  // namespace hb::knn
