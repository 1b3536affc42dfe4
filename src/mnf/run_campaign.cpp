#include "src/mnf/run_campaign.hpp"

#include <spdlog/spdlog.h>

#include <fmt/core.h>

#include <map>

#include "io/band_match.hpp"
#include "io/resample_view.hpp"
#include "mpi/agree.hpp"

namespace hb::mnf {
namespace {

constexpr int kCampaignTag = 7301;

// `m` re-centred on `shift`: Σ(x-t) = Σ(x-s) + n d and Σ(x-t)(x-t)ᵀ = Σ(x-s)(x-s)ᵀ +
// d Σ(x-s)ᵀ + Σ(x-s) dᵀ + n d dᵀ with d = s - t (upper triangle, as accumulated).
Moments recentred(const Moments& m, const std::vector<double>& shift) {
  Moments out = Moments::zero(shift);
  const auto n = static_cast<std::size_t>(m.bands());
  const auto count = static_cast<double>(m.count);
  std::vector<double> d(n);
  for (std::size_t i = 0; i < n; ++i) d[i] = m.shift[i] - shift[i];
  out.count = m.count;
  for (std::size_t i = 0; i < n; ++i) out.sum[i] = m.sum[i] + count * d[i];
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i; j < n; ++j)
      out.cross[i * n + j] = m.cross[i * n + j] + d[i] * m.sum[j] + m.sum[i] * d[j] + count * d[i] * d[j];
  return out;
}

// A scene's statistics as one message: pixels, the data's shift, then the data's and
// the noise's moments (mnf::pack; the noise's shift is zero).
std::vector<double> packed(const SceneStatistics& s) {
  std::vector<double> v{static_cast<double>(s.pixels)};
  v.insert(v.end(), s.data.shift.begin(), s.data.shift.end());
  for (const auto* m : {&s.data, &s.noise}) {
    const auto part = pack(*m);
    v.insert(v.end(), part.begin(), part.end());
  }
  return v;
}

std::size_t moments_size(std::size_t n) { return 1 + n + n * n; }
std::size_t packed_size(std::size_t n, bool with_noise) {
  return 1 + n + moments_size(n) + moments_size(with_noise ? n : 0);
}

void unpacked(std::span<const double> v, SceneStatistics& s, std::size_t bands, bool with_noise) {
  s.pixels = static_cast<std::int64_t>(v[0]);
  s.data = Moments::zero(std::vector<double>(v.begin() + 1, v.begin() + 1 + static_cast<std::ptrdiff_t>(bands)));
  s.noise = Moments::zero(std::vector<double>(with_noise ? bands : 0));
  unpack(v.subspan(1 + bands, moments_size(bands)), s.data);
  unpack(v.subspan(1 + bands + moments_size(bands)), s.noise);
}

// Headers only: the same bands, or, resampled to one target (`--resample-to`, which
// open_cube applies), the same units and a target every scene covers.
Status check_bands(const std::vector<std::string>& scenes) {
  const auto target = io::scene_band_target(scenes.front());
  if (!target) return io::check_same_bands(scenes);
  HB_TRY(io::check_same_units(scenes));
  return io::check_resampling(scenes, *target);
}

Result<SceneStatistics> scene_statistics(const std::string& path, TileOps& ops, const PipelineOptions& options) {
  auto cube = io::open_cube(path);
  if (!cube) return cube.error();
  auto stats = gather_statistics(**cube, ops, mpi::Comm::self(), options);
  if (!stats) return Error{stats.error().kind, stats.error().file.empty() ? path : stats.error().file,
                           stats.error().field, stats.error().message};
  return stats;
}

}  // namespace

Result<SceneStatistics> sum_in_scene_order(const std::vector<int>& holders,
                                           const std::map<std::size_t, SceneStatistics>& mine,
                                           const std::vector<std::string>& scenes, const PipelineOptions& options,
                                           const mpi::Comm& comm) {
  // Scene 0 fixes the bands and the common shift; its holder tells every rank the bands.
  const int first = holders.front();
  SceneStatistics total = comm.rank() == first ? mine.at(0) : SceneStatistics{};
  std::vector<std::int64_t> sizes{static_cast<std::int64_t>(total.rules.bands.size()),
                                  static_cast<std::int64_t>(total.excluded_bands.size())};
  comm.broadcast(sizes, first);
  total.rules.bands.resize(static_cast<std::size_t>(sizes[0]));
  total.excluded_bands.resize(static_cast<std::size_t>(sizes[1]));
  comm.broadcast(total.rules.bands, first);
  comm.broadcast(total.excluded_bands, first);
  total.estimator = options.estimator;
  const bool with_noise = options.method == Method::mnf;
  const auto n = total.rules.bands.size();
  Status merged;
  for (std::size_t i = 0; i < holders.size(); ++i) {
    const int holder = holders[i];
    SceneStatistics part;
    if (comm.rank() == holder) part = mine.at(i);
    if (holder != 0) {
      std::vector<double> v = comm.rank() == holder ? packed(part) : std::vector<double>();
      if (comm.rank() == holder) {
        std::vector<double> length{static_cast<double>(v.size())};
        comm.send(length, 0, kCampaignTag);
        comm.send(v, 0, kCampaignTag);
      } else if (comm.is_root()) {
        std::vector<double> length(1);
        comm.recv(length, holder, kCampaignTag);
        v.resize(static_cast<std::size_t>(length[0]));
        comm.recv(v, holder, kCampaignTag);
        if (v.size() != packed_size(n, with_noise)) {
          if (merged.ok()) merged = bad_input(scenes[i], "bbl", "uses other bands than " + scenes[0]);
          continue;
        }
        unpacked(v, part, n, with_noise);
      }
    }
    if (!comm.is_root() || !merged.ok()) continue;
    if (i == 0) {
      total.pixels = part.pixels, total.data = std::move(part.data), total.noise = std::move(part.noise);
      continue;
    }
    total.pixels += part.pixels;
    merged = merge(total.data, recentred(part.data, total.data.shift));
    if (merged.ok() && with_noise) merged = merge(total.noise, part.noise);
  }
  HB_TRY(mpi::agree(merged, comm));
  // Every rank takes part in the basis (computed on rank 0, broadcast): all get the sums.
  std::vector<double> v = comm.is_root() ? packed(total) : std::vector<double>(packed_size(n, with_noise));
  comm.broadcast(v);
  if (!comm.is_root()) unpacked(v, total, n, with_noise);
  return total;
}

Result<SceneStatistics> campaign_statistics(const std::vector<std::string>& scenes, TileOps& ops,
                                            const PipelineOptions& options, const mpi::Comm& comm) {
  // Headers only, on every rank, before any pixel is read: nothing is written on refusal.
  HB_TRY(mpi::agree(check_bands(scenes), comm));
  const auto ranks = static_cast<std::size_t>(comm.size());
  std::vector<int> holders(scenes.size());
  std::map<std::size_t, SceneStatistics> mine;
  Status local;
  for (std::size_t i = 0; i < scenes.size(); ++i) {
    holders[i] = static_cast<int>(i % ranks);
    if (holders[i] != comm.rank() || !local.ok()) continue;
    auto stats = scene_statistics(scenes[i], ops, options);
    if (!stats) {
      local = stats.error();
      continue;
    }
    if (!mine.empty() && stats->rules.bands != mine.begin()->second.rules.bands)
      local = bad_input(scenes[i], "bbl", "uses other bands than " + scenes[static_cast<std::size_t>(comm.rank())]);
    mine.emplace(i, std::move(*stats));
  }
  HB_TRY(mpi::agree(local, comm));
  auto total = sum_in_scene_order(holders, mine, scenes, options, comm);
  if (total)
    spdlog::info("campaign statistics: {} scenes over {} ranks, {} valid pixels", scenes.size(), ranks,
                 total->data.count);
  return total;
}

}  // namespace hb::mnf
