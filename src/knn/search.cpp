#include "src/knn/search.hpp"

#include <algorithm>

#include "src/classify/features.hpp"

#ifdef HB_HAVE_CUDA
#include "src/knn/cuda_search.hpp"
#endif

namespace hb::knn {

Result<const float*> KnnSearch::gather(int slot, const io::Tile& tile, std::span<const std::int64_t> pixel,
                                      std::span<const std::int64_t> bands, std::span<const double> shift) {
  const auto floats = static_cast<std::int64_t>(pixel.size() * bands.size());
  float* queries = KnnSearch::query_buffer(std::max<std::int64_t>(floats, 1), slot);
  classify::gather_queries(tile, pixel, bands, shift, queries);
  return static_cast<const float*>(queries);
}

Result<const float*> KnnSearch::list_and_gather(int slot, const io::Tile& tile,
                                                const classify::BandSelection& selection,
                                                std::optional<double> ignore_value, std::span<const double> shift,
                                                std::vector<std::int64_t>& pixel) {
  classify::valid_pixels(tile, selection, ignore_value, valid_, pixel);
  return gather(slot, tile, pixel, selection.bands, shift);
}

Status KnnSearch::copy_queries(const float* queries, std::int64_t floats, float* out) {
  std::copy_n(queries, floats, out);
  return {};
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
