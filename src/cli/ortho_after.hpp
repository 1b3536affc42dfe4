// `--ortho GLT` on mnf, pca, knn and sam: the product straight onto the GLT's map grid.
// The command runs as without the option, but writes its raster products into hidden
// ENVI temporaries beside -o (".OUT.tmp.PID.ortho.hdr" and siblings); ortho::run then
// writes each onto the grid under its final name (format by extension: .h5, ENVI,
// .tif), the main product last, and the temporaries go whatever happens.
//
//   OrthoOutputs o{.glt = glt, .scene = scene, .output = out, .auxiliary = {{"confidence", "_confidence"}}};
//   auto written = run_onto_grid(o, [&](const OrthoTemporaries& t) { job.output = t.output; return run(job); }, comm);
//
// Before any work: the FilePlan (every input, the GLT included, against the final
// outputs; the command's own plan checks its inputs against the temporaries) and
// ortho::check_glt (a bad GLT is bad input, exit 3, with nothing written).
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "mpi/comm.hpp"
#include "src/backend/backend.hpp"
#include "src/base/error.hpp"

namespace hb::cli {

// A product written beside the main one: OUT_suffix for ENVI/.tif, /dataset inside OUT.h5.
struct AuxiliaryProduct {
  std::string dataset;  // "confidence"
  std::string suffix;   // "_confidence"
};

// An option and its path.
using NamedPath = std::pair<std::string, std::string>;

struct OrthoOutputs {
  std::string glt;                           // --ortho
  std::string scene;                         // the command's scene: the GLT must fit its shape
  std::string output;                        // -o
  std::vector<AuxiliaryProduct> auxiliary;   // products beside -o (knn confidence, sam score)
  std::vector<NamedPath> more;               // other raster outputs, each its own cube (sam --rules)
  bool statistics = false;                   // mnf/pca statistics beside -o: kept as they are
  std::vector<NamedPath> reads;              // the command's other inputs (for the plan)
  std::vector<NamedPath> kept;               // non-raster outputs written as they are (for the plan)
  BackendKind backend = BackendKind::automatic;
};

// Where the command writes: `output` stands for -o, `more` for OrthoOutputs::more in order.
struct OrthoTemporaries {
  std::string output;
  std::vector<std::string> more;
};

using ProductStep = std::function<Status(const OrthoTemporaries&)>;

// Runs `product` into temporaries, then puts every raster onto the grid. Collective over
// `comm`. Returns the final paths written onto the grid.
Result<std::vector<std::string>> run_onto_grid(const OrthoOutputs& o, const ProductStep& product,
                                               const mpi::Comm& comm);

// Adds --ortho GLT to `app`.
CLI::Option* add_ortho_option(CLI::App& app, std::string& glt);

}  // namespace hb::cli
