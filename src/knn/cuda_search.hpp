// The CUDA backend of the KNN seams (search.hpp, batch_vote.hpp): cuBLAS SGEMM
// distances, the kernels of kernels/knn for selection, merge and vote. Only built with
// HB_CUDA; declarations are plain C++.
#pragma once

#include <memory>

#include "src/backend/backend.hpp"
#include "src/knn/batch_vote.hpp"
#include "src/knn/search.hpp"

namespace hb::knn {

// Needs a visible GPU (`device` is its ordinal; by default this process's GPU, never
// simply GPU 0): otherwise an ErrorKind::resource error.
Result<std::unique_ptr<KnnSearch>> make_cuda_knn_search(const SearchOptions& options, int device = kProcessGpu);
Result<std::unique_ptr<BatchVoter>> make_cuda_batch_voter(const VoteRule& rule, int device = kProcessGpu);
int cuda_vote_max_classes();

// The method `auto` runs, logged from a host-compiled file (spdlog does not build under nvcc).
void log_select_method(std::string_view method);
// A search's GPU time (seconds) over its life, split by event spans: at debug level.
void log_search_gpu_time(int device, std::int64_t blocks, double gather, double upload, double search, double lists);

}  // namespace hb::knn
