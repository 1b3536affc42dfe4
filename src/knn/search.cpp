#include "src/knn/search.hpp"

namespace hb::knn {

Result<std::unique_ptr<KnnSearch>> make_knn_search(BackendKind kind, const SearchOptions& options) {
  // The CUDA KNN search is not written yet: an explicit request is an error rather
  // than a silent fallback, so that timings are never attributed to the wrong device.
  if (kind == BackendKind::cuda)
    return Error{ErrorKind::usage, {}, "--backend", "the CUDA KNN search is not available in this build yet"};
  return make_cpu_knn_search(options);
}

}  // namespace hb::knn
