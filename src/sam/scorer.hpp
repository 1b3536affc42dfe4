// The backend seam of SAM / spectral correlation: scores of every pixel of a raw tile
// against every reference spectrum, the best match, and (on request) all scores.
//
// Both methods are one computation. References are prepared once on the host in FP64
// (prepare_references): u_j = r_j / |r_j| for SAM, u_j = (r_j - mean r_j) / |r_j - mean r_j|
// for SCM. Then, for a pixel x over the compared bands,
//     similarity_j = (x . u_j) / n(x),  n(x) = |x| (SAM) or sqrt(sum x^2 - (sum x)^2 / bands) (SCM)
// (u_j sums to zero for SCM, so x need not be centred). The best match is the largest
// similarity, ties to the lowest index; the score reported is the angle acos(similarity)
// (SAM, radians) or the Pearson correlation itself (SCM).
//
// For backends (CPU here, CUDA in src/sam/cuda_scorer.cu):
//  * The tile arrives raw (its scene type, canonical layout); the backend widens it on
//    its side. Only the tile's core rows are scored.
//  * A pixel is ignored (best = -1, scores NaN) when a compared band is non-finite or
//    equals the scene's data ignore value (compared in float32, as knn does), and
//    degenerate (the same) when n(x) = 0.
//  * Accumulate in FP64: float32 dot products miss the 1e-6 rad agreement with Spectral
//    Python at the small angles that matter most.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/base/error.hpp"
#include "io/tile.hpp"
#include "src/backend/backend.hpp"

namespace hb::sam {

enum class Method { sam, scm };
// CUDA only: the direct kernel (references in constant or global memory, pixels staged
// in shared memory) or DGEMM + a selection kernel. automatic picks by library size.
enum class Formulation { automatic, direct, gemm };

std::optional<Method> method_from_name(std::string_view name);            // sam | scm
std::string_view method_name(Method method);
std::optional<Formulation> formulation_from_name(std::string_view name);  // auto | direct | gemm
std::string_view formulation_name(Formulation formulation);

struct References {
  Method method = Method::sam;
  std::int64_t count = 0;
  std::int64_t dims = 0;
  std::vector<double> unit;  // [count, dims], prepared as above
};

// Fails (bad input) when a spectrum has zero norm (SAM) or zero variance (SCM).
Result<References> prepare_references(Method method, const std::vector<double>& spectra, std::int64_t dims,
                                      const std::vector<std::string>& names, const std::string& source);

// Which scene bands are compared and which pixels are ignored.
struct PixelBands {
  std::vector<std::int64_t> bands;          // scene band of each compared dimension
  std::optional<double> ignore_value;
};

struct TileScores {
  std::vector<std::int32_t> best;  // [core pixels] reference index, -1 = ignored / degenerate
  std::vector<float> best_score;   // angle (SAM) or correlation (SCM); NaN where best = -1
  std::vector<float> scores;       // [core pixels, count] when asked for; NaN where best = -1
};

class SamScorer {
 public:
  virtual ~SamScorer() = default;
  virtual std::string_view backend_name() const = 0;  // "cpu" or "cuda"
  // What runs: e.g. "cpu dgemm", "direct, constant memory", "dgemm".
  virtual std::string formulation() const = 0;
  virtual Status set_references(const References& references) = 0;
  virtual Status score(const io::Tile& tile, const PixelBands& bands, bool all_scores, TileScores& out) = 0;
  // Memory for tiles: pinned on CUDA.
  virtual HostAllocator host_allocator() const { return {}; }
};

std::unique_ptr<SamScorer> make_cpu_sam_scorer();

// cpu: always. cuda: needs a CUDA build and a GPU. automatic: cuda when available.
Result<std::unique_ptr<SamScorer>> make_sam_scorer(BackendKind kind, Formulation formulation = Formulation::automatic,
                                                   int device = kProcessGpu);

// Library sizes up to this use the direct kernel under Formulation::automatic
// (measured crossover, kernels/sam/README.md).
std::int64_t direct_formulation_limit(std::int64_t dims);

// The reported score for a similarity (angle for SAM, correlation for SCM).
double reported_score(Method method, double similarity);

}  // namespace hb::sam
