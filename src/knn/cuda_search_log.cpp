#include <spdlog/spdlog.h>

#include "src/base/pinned_pool.hpp"
#include "src/knn/cuda_search.hpp"

namespace hb::knn {

void log_select_method(std::string_view method) { spdlog::info("knn: k-selection on the GPU: {}", method); }

void log_search_gpu_time(int device, std::int64_t blocks, double gather, double upload, double search, double lists) {
  const auto pinned = cuda::pinned_totals();
  spdlog::debug(
      "knn search on GPU {}: {} query blocks; GPU time {:.3f} s uploading and gathering query tiles "
      "(own stream), {:.3f} s uploading queries, {:.3f} s searching, {:.3f} s returning lists; the process "
      "pinned {:.2f} GB of host memory in {} blocks ({:.3f} s)",
      device, blocks, gather, upload, search, lists, static_cast<double>(pinned.bytes) / 1e9, pinned.blocks,
      pinned.seconds);
}

}  // namespace hb::knn
