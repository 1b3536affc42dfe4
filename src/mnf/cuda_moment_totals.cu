// The statistics' running totals on the GPU (see MnfTileOps): each tile's moments are
// folded into device-side totals, one per host Moments, in the order a host fold would
// add them; finish_moments() brings them home.
#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/mnf/syrk.cuh"
#include "src/base/cuda_error.hpp"
#include "src/base/stopwatch.hpp"
#include "src/mnf/cuda_tile_ops.hpp"

namespace hb::cuda {
namespace {

namespace km = hb::kernels::mnf;

Status check(cudaError_t e, const char* what) { return status(e, what); }
Status check(const km::LaunchStatus& s, const char* what) {
  if (s.ok()) return {};
  return Error{ErrorKind::internal, {}, "cuda", std::string(what) + ": " + s.message()};
}

// Adds one tile's moments (upper triangle of the cross products) into the running
// totals: the same FP64 additions, in the same order, as the host fold they replace.
__global__ void fold_moments(const unsigned long long* __restrict__ count, const double* __restrict__ sum,
                             const double* __restrict__ cross, int nb, unsigned long long* total_count,
                             double* __restrict__ total_sum, double* __restrict__ total_cross) {
  const std::int64_t n = std::int64_t{nb} * nb;
  for (std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::int64_t{gridDim.x} * blockDim.x)
    if (i % nb >= i / nb) total_cross[i] += cross[i];
  if (blockIdx.x != 0) return;
  for (int k = threadIdx.x; k < nb; k += blockDim.x) total_sum[k] += sum[k];
  if (threadIdx.x == 0) *total_count += *count;
}

}  // namespace

// Adds XᵀX of the tile (X already written, count and sums added by the fill kernel)
// with the SYRK kernel, then folds the tile's moments into the device totals of `into`.
Status MnfTileOps::add_tile_moments(std::int64_t core_pixels, mnf::Moments& into) {
  const int nb = static_cast<int>(rules_bands_.size());
  // The hand SYRK (MNF-C) beat cuBLAS DSYRK on this tall-skinny shape on the H200
  // (docs/PERFORMANCE.md) and its summation order is fixed: it is the default.
  HB_TRY(check(syrk_workspace_.reserve(km::syrk_tiled_workspace_bytes(core_pixels, nb)), "SYRK workspace"));
  steps_.begin(stream_);
  HB_TRY(check(km::syrk_tiled(matrix_.as<double>(), core_pixels, nb, cross_.as<double>(), syrk_workspace_.as<void>(),
                              syrk_workspace_.bytes(), stream_),
               "SYRK"));
  auto totals = totals_for(into);
  if (!totals) return totals.error();
  Totals& t = **totals;
  fold_moments<<<std::max(1, std::min(1024, (nb * nb + 255) / 256)), 256, 0, stream_>>>(
      count_.as<unsigned long long>(), sum_.as<double>(), cross_.as<double>(), nb, t.count.as<unsigned long long>(),
      t.sum.as<double>(), t.cross.as<double>());
  HB_TRY(check(cudaGetLastError(), "fold moments"));
  steps_.end(stream_, kCross);
  return release_tile();
}

Result<MnfTileOps::Totals*> MnfTileOps::totals_for(mnf::Moments& host) {
  for (auto& t : totals_)
    if (t->host == &host) return t.get();
  const int nb = static_cast<int>(rules_bands_.size());
  if (host.bands() != nb || host.sum.size() != static_cast<std::size_t>(nb) ||
      host.cross.size() != static_cast<std::size_t>(nb) * nb)
    return Error{ErrorKind::internal, {}, {}, "moments: band count differs from the rules"};
  // Device buffers are reused from earlier totals: a granule's moments come and go per tile.
  std::unique_ptr<Totals> t;
  if (spare_.empty()) {
    t = std::make_unique<Totals>();
  } else {
    t = std::move(spare_.back());
    spare_.pop_back();
  }
  t->host = &host;
  HB_TRY(check(t->count.reserve(sizeof(unsigned long long)), "moments"));
  HB_TRY(check(t->sum.reserve(host.sum.size() * sizeof(double)), "moments"));
  HB_TRY(check(t->cross.reserve(host.cross.size() * sizeof(double)), "moments"));
  // Seeded with what the host already holds, so the fold continues its sums exactly;
  // fresh totals (the usual case) are cleared on the device without a host round trip.
  const auto is_zero = [](const std::vector<double>& v) {
    return std::all_of(v.begin(), v.end(), [](double x) { return x == 0.0 && !std::signbit(x); });
  };
  if (host.count == 0 && is_zero(host.sum) && is_zero(host.cross)) {
    HB_TRY(check(cudaMemsetAsync(t->count.as<void>(), 0, sizeof(unsigned long long), stream_), "moments"));
    HB_TRY(check(cudaMemsetAsync(t->sum.as<void>(), 0, host.sum.size() * sizeof(double), stream_), "moments"));
    HB_TRY(check(cudaMemsetAsync(t->cross.as<void>(), 0, host.cross.size() * sizeof(double), stream_), "moments"));
  } else {
    const auto count = static_cast<unsigned long long>(host.count);
    HB_TRY(check(cudaMemcpyAsync(t->count.as<void>(), &count, sizeof(count), cudaMemcpyHostToDevice, stream_),
                 "copy"));
    HB_TRY(check(cudaMemcpyAsync(t->sum.as<void>(), host.sum.data(), host.sum.size() * sizeof(double),
                                 cudaMemcpyHostToDevice, stream_), "copy"));
    HB_TRY(check(cudaMemcpyAsync(t->cross.as<void>(), host.cross.data(), host.cross.size() * sizeof(double),
                                 cudaMemcpyHostToDevice, stream_), "copy"));
    HB_TRY(check(cudaStreamSynchronize(stream_), "moments"));  // `count` above is on the stack
  }
  totals_.push_back(std::move(t));
  return totals_.back().get();
}

// Every totals' count, sums and cross products are copied home on the kernels' stream
// into one pinned buffer and waited for once, instead of a synchronous round trip for
// each (docs/PERFORMANCE.md, "Scene bytes to the GPU").
Status MnfTileOps::finish_moments() {
  cudaSetDevice(device_);
  resident_[0] = resident_[1] = {};  // the reader's buffers are about to be freed or reused
  if (totals_.empty()) return {};
  const Stopwatch waiting;
  // Each totals' place at home: the count's 8 bytes, then its sums and cross products.
  std::vector<std::size_t> at{0};
  for (const auto& t : totals_) at.push_back(at.back() + 1 + t->host->sum.size() + t->host->cross.size());
  HB_TRY(check(moments_home_.reserve(at.back() * sizeof(double)), "moments"));
  const auto copy_home = [&](double* to, const DeviceBuffer& from, std::size_t doubles) {
    return check(cudaMemcpyAsync(to, from.as<void>(), doubles * sizeof(double), cudaMemcpyDeviceToHost, stream_),
                 "copy moments home");
  };
  for (std::size_t i = 0; i < totals_.size(); ++i) {
    const Totals& t = *totals_[i];
    const std::size_t nb = t.host->sum.size();
    double* home = moments_home_.as<double>() + at[i];
    HB_TRY(copy_home(home, t.count, 1));
    HB_TRY(copy_home(home + 1, t.sum, nb));
    HB_TRY(copy_home(home + 1 + nb, t.cross, nb * nb));
  }
  HB_TRY(check(cudaStreamSynchronize(stream_), "statistics"));
  steps_.collect();
  for (std::size_t i = 0; i < totals_.size(); ++i) {
    mnf::Moments& host = *totals_[i]->host;
    const std::size_t nb = host.sum.size();
    const double* home = moments_home_.as<double>() + at[i];
    unsigned long long count = 0;
    std::memcpy(&count, home, sizeof(count));
    host.count = static_cast<std::int64_t>(count);
    std::copy_n(home + 1, nb, host.sum.begin());
    const double* cross = home + 1 + nb;
    for (std::size_t r = 0; r < nb; ++r)  // the upper triangle, as the fold adds it
      std::copy(cross + r * nb + r, cross + (r + 1) * nb, host.cross.begin() + static_cast<std::ptrdiff_t>(r * nb + r));
  }
  for (auto& t : totals_) spare_.push_back(std::move(t));
  totals_.clear();
  waits_.moments_seconds += waiting.seconds();
  return {};
}

}  // namespace hb::cuda
