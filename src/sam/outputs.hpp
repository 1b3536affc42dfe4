// The files `sam` writes (through src/classify/products.hpp, the classifiers' shared writer):
//   ENVI  OUT(.hdr)     class map, uint16, ENVI Classification: 0 Unclassified, then one
//                       class per reference spectrum (its name; the truth raster's colours
//                       for class means, else a fixed palette)
//         OUT_score     float32: the best match's angle (SAM, radians) or correlation (SCM)
//   HDF5  OUT.h5 with /cube (class map) and /score
//   RULES (--rules, any format) float32, one band per reference: every score
//         (the ENVI "rule image"); band names = spectrum names; NaN where ignored
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "io/cube.hpp"
#include "io/file_identity.hpp"
#include "mpi/comm.hpp"
#include "src/classify/products.hpp"
#include "src/sam/resample.hpp"
#include "src/sam/scorer.hpp"

namespace hb::sam {

// Adds the final files SamOutputs::create writes for OUT and --rules to `plan`.
void plan_sam_outputs(io::FilePlan& plan, const std::string& output, const std::string& rules);

class SamOutputs {
 public:
  // With a parallel `comm` every rank writes its rows into the same files; writes are
  // collective (every rank makes the same calls, empty ones included).
  static Result<SamOutputs> create(const std::string& output, const std::string& rules, const io::CubeInfo& scene,
                                   const std::string& scene_path, const ResampledLibrary& library, Method method,
                                   const mpi::Comm* comm = nullptr);
  bool wants_rules() const { return rules_ != nullptr; }
  Status write(RowRange rows, std::span<const std::uint16_t> labels, const TileScores& scores);
  // Rules first, the class map last: its presence means the run finished.
  Status commit();
  std::vector<std::string> paths() const;

 private:
  std::unique_ptr<classify::ProductFiles> classes_;
  std::unique_ptr<io::CubeWriter> rules_;
  std::string rules_path_;
};

}  // namespace hb::sam
