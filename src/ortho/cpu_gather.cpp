// The CPU half of the gather: one memcpy per grid pixel, rows of the tile over threads.
#include <algorithm>
#include <cstring>

#include "src/base/parallel_for.hpp"
#include "src/ortho/gather.hpp"
#ifdef HB_HAVE_CUDA
#include "src/ortho/cuda_gather.hpp"
#endif

namespace hb::ortho {
namespace {

class CpuGatherer final : public Gatherer {
 public:
  std::string_view backend_name() const override { return "cpu"; }

  Status gather(const GatherTile& t, std::span<std::byte> out) override {
    const auto bytes = static_cast<std::size_t>(t.pixel_bytes);
    const std::int32_t* samples = t.glt->sample.data() + t.first_pixel;
    const std::int32_t* lines = t.glt->line.data() + t.first_pixel;
    parallel_for(t.pixels, 4096, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t p = begin; p < end; ++p) {
        std::byte* to = out.data() + static_cast<std::size_t>(p) * bytes;
        if (samples[p] < 0 || lines[p] < 0) {
          std::memcpy(to, t.fill.data(), bytes);
          continue;
        }
        const std::int64_t from = (lines[p] - t.source_rows.begin) * t.source_samples + samples[p];
        std::memcpy(to, t.source.data() + static_cast<std::size_t>(from) * bytes, bytes);
      }
    });
    return {};
  }
};

}  // namespace

std::unique_ptr<Gatherer> make_cpu_gatherer() { return std::make_unique<CpuGatherer>(); }

Result<std::unique_ptr<Gatherer>> make_gatherer(BackendKind kind, int device) {
  if (kind == BackendKind::cpu) return make_cpu_gatherer();
#ifdef HB_HAVE_CUDA
  if (kind == BackendKind::cuda || cuda_device_count() > 0) return make_cuda_gatherer(device);
#else
  (void)device;
  if (kind == BackendKind::cuda)
    return Error{ErrorKind::usage, {}, "--backend", "this build has no CUDA backend (configure with HB_CUDA=ON)"};
#endif
  return make_cpu_gatherer();
}

}  // namespace hb::ortho
