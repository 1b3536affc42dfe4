// SAM / spectral-correlation device kernels (launchers). Host-only declarations:
// includable from plain C++. Both formulations compute similarity_j = (x . u_j) / n(x)
// in FP64 over the compared bands (src/sam/scorer.hpp explains u_j and n(x)).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "src/base/data_type.hpp"

namespace hb::kernels::sam {

// Raw core pixels of a tile in device memory (canonical layout, `bands` samples each).
struct RawPixels {
  DataType type = DataType::i16;
  const void* data = nullptr;
  std::int64_t pixels = 0;
  int bands = 0;
};

// Which bands are compared (device array of `dims` scene band indices) and which pixels count.
struct PixelRule {
  const int* band_index = nullptr;
  int dims = 0;
  bool has_ignore = false;
  float ignore = 0;
  bool centred = false;  // SCM: n(x) from the centred pixel
};

// Per pixel: best reference (-1 = ignored/degenerate), its score, optionally all scores
// ([pixels, count] row-major). Scores are angles when `angles`, else correlations.
struct ScoreOutputs {
  std::int32_t* best = nullptr;
  float* best_score = nullptr;
  float* scores = nullptr;  // may be null
  int count = 0;
  bool angles = true;
};

// References per block of the direct kernel: the library is padded with zero spectra
// to a multiple of this.
constexpr int kReferenceBlock = 8;
// Doubles of __constant__ memory holding the references (62 KB of the 64 KB bank).
constexpr std::int64_t kConstantDoubles = 7936;

// Copies `n` doubles (padded references, [count_padded, dims]) into constant memory.
cudaError_t upload_constant_references(const double* host, std::int64_t n, cudaStream_t stream);

// The direct formulation: 1D blocks of pixels, each block's spectra staged band-sequentially
// in shared memory (float, padded against bank conflicts); each thread scores one pixel
// against the references read as broadcasts from constant memory (`references` null) or
// global memory ([count_padded, dims]). Fails with cudaErrorInvalidValue when dims are too
// many for shared memory (> 1551).
cudaError_t score_direct(const RawPixels& in, const PixelRule& rule, const double* references, int count_padded,
                         const ScoreOutputs& out, cudaStream_t stream);

// The GEMM formulation, step 1: x [pixels, dims] FP64 of the compared bands, and n(x)
// (0 for ignored or degenerate pixels).
cudaError_t gather_pixels(const RawPixels& in, const PixelRule& rule, double* x, double* norm, cudaStream_t stream);
// Step 3 (step 2 is cublasDgemm: dots = x . U^T): best match per pixel, one warp per pixel.
// `dots` is [pixels, count]; outputs start at the chunk's first pixel.
cudaError_t select_best(const double* dots, const double* norm, std::int64_t pixels, const ScoreOutputs& out,
                        cudaStream_t stream);

}  // namespace hb::kernels::sam
