#include <spdlog/spdlog.h>

#include "src/base/pinned_pool.hpp"
#include "src/knn/cuda_search.hpp"

namespace hb::knn {

void log_select_method(std::string_view method) { spdlog::info("knn: k-selection on the GPU: {}", method); }

void log_search_times(int device, const SearchTimes& t) {
  const auto pinned = cuda::pinned_totals();
  spdlog::debug(
      "knn search on GPU {}: {} query blocks; GPU time {:.3f} s uploading and gathering query tiles "
      "(own stream), {:.3f} s uploading queries, {:.3f} s searching (the first block {:.3f} s), {:.3f} s returning "
      "lists; host {:.3f} s uploading training chunks, {:.3f} s growing device buffers; the process pinned {:.2f} GB "
      "of host memory in {} blocks ({:.3f} s)",
      device, t.spans, t.gather, t.upload, t.search, t.first_search, t.lists, t.training_up, t.buffers,
      static_cast<double>(pinned.bytes) / 1e9, pinned.blocks, pinned.seconds);
}

}  // namespace hb::knn
