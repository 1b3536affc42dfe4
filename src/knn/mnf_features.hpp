// --features mnf:N: the classifier sees the scene's first N MNF components instead of
// its bands. The MNF of src/mnf runs first into a temporary cube beside the output,
// which the classification then reads like any scene; the cube is removed afterwards.
#pragma once

#include "src/knn/run.hpp"

namespace hb::knn {

// Collective over `comm`: the components are written and classified by every rank.
Result<KnnJobResult> run_on_mnf_components(const KnnJob& job, const mpi::Comm& comm, const ProgressFn& progress);

}  // namespace hb::knn
