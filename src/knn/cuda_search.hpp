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
// A search's GPU time (seconds) over its life, split by event spans, and the host's
// seconds of its one-time work: logged at debug level.
struct SearchTimes {
  double gather = 0, upload = 0, search = 0, lists = 0;  // GPU
  double first_search = 0;                              // GPU: the first block's (kernels' first use)
  double training_up = 0, buffers = 0;                  // host: chunks uploaded, device buffers grown
  std::int64_t spans = 0;                               // query blocks
};
void log_search_times(int device, const SearchTimes& times);

}  // namespace hb::knn
