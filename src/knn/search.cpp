#include "src/knn/search.hpp"

#ifdef HB_HAVE_CUDA
#include "src/knn/cuda_search.hpp"
#endif

namespace hb::knn {

Result<std::unique_ptr<KnnSearch>> make_knn_search(BackendKind kind, const SearchOptions& options) {
#ifdef HB_HAVE_CUDA
  if (kind == BackendKind::cuda || (kind == BackendKind::automatic && cuda_device_count() > 0))
    return make_cuda_knn_search(options);
#else
  // An explicit request is an error rather than a silent fallback, so that timings are
  // never attributed to the wrong device.
  if (kind == BackendKind::cuda)
    return Error{ErrorKind::usage, {}, "--backend", "this build has no CUDA support"};
#endif
  return make_cpu_knn_search(options);
}

}  // namespace hb::knn
