#include "src/knn/search.hpp"

#include "src/knn/features.hpp"

#ifdef HB_HAVE_CUDA
#include "src/knn/cuda_search.hpp"
#endif

namespace hb::knn {

void* KnnSearch::narrow_buffer(io::DataType type, std::int64_t rows, std::int64_t dims, int slot) {
  auto& buffer = narrow_buffers_[slot & 1];
  const auto bytes = static_cast<std::size_t>(rows * dims) * io::bytes_per_sample(type);
  if (buffer.size() < bytes) buffer.resize(bytes);
  KnnSearch::query_buffer(rows * dims, slot);  // widen() then writes there without growing it
  return buffer.data();
}

Result<const float*> KnnSearch::widen(int slot, io::DataType type, std::int64_t rows, std::int64_t dims,
                                      std::span<const double> shift) {
  float* queries = query_buffers_[slot & 1].data();
  widen_queries(narrow_buffers_[slot & 1].data(), type, rows, dims, shift, queries);
  return static_cast<const float*>(queries);
}

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
