// The CUDA backend of the KNN seams (search.hpp, batch_vote.hpp): cuBLAS SGEMM
// distances, the kernels of kernels/knn for selection, merge and vote. Only built with
// HB_CUDA; declarations are plain C++.
#pragma once

#include <memory>

#include "src/knn/batch_vote.hpp"
#include "src/knn/search.hpp"

namespace hb::knn {

// Needs a visible GPU (`device` is its ordinal): otherwise an ErrorKind::resource error.
Result<std::unique_ptr<KnnSearch>> make_cuda_knn_search(const SearchOptions& options, int device = 0);
Result<std::unique_ptr<BatchVoter>> make_cuda_batch_voter(const VoteRule& rule, int device = 0);
int cuda_vote_max_classes();

// The probe's verdict, logged from a host-compiled file (spdlog does not build under nvcc).
void log_select_probe(std::string_view method, double milliseconds, std::int64_t rows, std::int64_t cols, int k,
                      bool chosen);

}  // namespace hb::knn
