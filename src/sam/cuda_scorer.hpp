#pragma once

#include <memory>

#include "src/sam/scorer.hpp"

namespace hb::sam {
// Only defined in CUDA builds (src/sam/cuda_scorer.cu).
Result<std::unique_ptr<SamScorer>> make_cuda_sam_scorer(Formulation formulation, int device);
}  // namespace hb::sam
