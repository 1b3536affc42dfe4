#include "jobs/campaign.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "io/cube.hpp"
#include "io/resample_view.hpp"
#include "jobs/schedule.hpp"
#include "src/mnf/pipeline.hpp"
#include "src/mnf/stats_file.hpp"

namespace hb::jobs {
namespace {

// Re-centres sums taken about `m.shift` onto `shift`: with d = old - new,
// Σ(x-new) = Σ(x-old) + n d and Σ(x-new)(x-new)ᵀ = C + s dᵀ + d sᵀ + n d dᵀ (upper triangle).
void move_shift(mnf::Moments& m, const std::vector<double>& shift) {
  const auto b = static_cast<std::size_t>(m.bands());
  std::vector<double> d(b);
  for (std::size_t i = 0; i < b; ++i) d[i] = m.shift[i] - shift[i];
  const auto n = static_cast<double>(m.count);
  for (std::size_t i = 0; i < b; ++i)
    for (std::size_t j = i; j < b; ++j) m.cross[i * b + j] += m.sum[i] * d[j] + d[i] * m.sum[j] + n * d[i] * d[j];
  for (std::size_t i = 0; i < b; ++i) m.sum[i] += n * d[i];
  m.shift = shift;
}

constexpr int kFoldTag = 7201;

std::vector<std::string> names_of(const std::map<std::string, mnf::SceneStatistics>& scenes) {
  std::vector<std::string> names;
  for (const auto& [name, stats] : scenes) names.push_back(name);
  return names;
}

// Every rank's scene names with the rank that holds each, in name order: the order in
// which scenes' moments are summed, the same whichever ranks hold them.
std::vector<std::pair<std::string, int>> holders(const std::vector<std::string>& mine, const mpi::Comm& comm) {
  const auto all = comm.allgather(mine);  // scene names are one path component: one line each
  std::vector<std::pair<std::string, int>> held;
  for (std::size_t rank = 0; rank < all.size(); ++rank)
    for (const auto& name : all[rank]) held.emplace_back(name, static_cast<int>(rank));
  std::sort(held.begin(), held.end());
  return held;
}

// The first scene in name order gives the bands and shifts that every scene's moments
// are moved to; its holder broadcasts them.
void share_reference(std::optional<mnf::SceneStatistics>& reference, int holder, const mpi::Comm& comm) {
  if (!comm.is_parallel()) return;
  std::vector<std::int64_t> sizes(4, 0);
  if (comm.rank() == holder)
    sizes = {reference->rules.used_bands(), reference->data.bands(), reference->noise.bands(),
             static_cast<std::int64_t>(reference->excluded_bands.size())};
  comm.broadcast(sizes, holder);
  if (comm.rank() != holder) {
    reference.emplace();
    reference->rules.bands.resize(static_cast<std::size_t>(sizes[0]));
    reference->data.shift.resize(static_cast<std::size_t>(sizes[1]));
    reference->noise.shift.resize(static_cast<std::size_t>(sizes[2]));
    reference->excluded_bands.resize(static_cast<std::size_t>(sizes[3]));
  }
  comm.broadcast(reference->rules.bands, holder);
  comm.broadcast(reference->excluded_bands, holder);
  comm.broadcast(reference->data.shift, holder);
  comm.broadcast(reference->noise.shift, holder);
}

// Σ of the scenes' moments (already about the reference's shifts) on rank 0, added one
// scene at a time in name order, each sent by its holder: the same bits as one rank
// adding them all, for any rank count and any deal of the scenes.
void fold_in_name_order(mnf::SceneStatistics& total, const std::vector<std::pair<std::string, int>>& order,
                        const std::map<std::string, mnf::SceneStatistics>& mine, const mpi::Comm& comm) {
  const auto size = static_cast<std::size_t>(3 + total.data.bands() * (1 + total.data.bands()) +
                                             total.noise.bands() * (1 + total.noise.bands()));
  for (const auto& [name, holder] : order) {
    std::vector<double> message;
    if (holder == comm.rank()) {
      const auto& s = mine.at(name);
      message = mnf::pack(s.data);
      const auto noise = mnf::pack(s.noise);
      message.insert(message.end(), noise.begin(), noise.end());
      message.push_back(static_cast<double>(s.pixels));
      if (!comm.is_root()) comm.send(message, 0, kFoldTag);
    } else if (comm.is_root()) {
      message.resize(size);
      comm.recv(message, holder, kFoldTag);
    }
    if (!comm.is_root()) continue;
    mnf::Moments data = mnf::Moments::zero(total.data.shift), noise = mnf::Moments::zero(total.noise.shift);
    const std::span<const double> parts(message);
    const auto data_size = static_cast<std::size_t>(1 + data.bands() * (1 + data.bands()));
    mnf::unpack(parts.first(data_size), data);
    mnf::unpack(parts.subspan(data_size, parts.size() - data_size - 1), noise);
    // Both are about the total's shifts: merging cannot fail.
    (void)mnf::merge(total.data, data);
    (void)mnf::merge(total.noise, noise);
    total.pixels += static_cast<std::int64_t>(parts.back());
  }
}

Status write_basis(const JobSpec& job, const mnf::SceneStatistics& total, std::int64_t scene_bands,
                   const std::string& stats_path) {
  auto cov = mnf::covariances(total, mnf::Method::mnf);
  if (!cov) return cov.error();
  auto basis = mnf::build_basis(*cov, total.rules, mnf::Method::mnf);
  if (!basis) return basis.error();
  mnf::Selection selection;
  selection.components = job.mnf.components;
  auto m = mnf::select_components(*basis, selection);
  if (!m) return m.error();
  mnf::StatsRecord r;
  r.estimator = total.estimator;
  r.scene_bands = scene_bands;
  r.bands = total.rules.bands;
  r.excluded_bands = total.excluded_bands;
  r.mean = cov->data.mean;
  r.data_covariance = cov->data.covariance;
  r.noise_covariance = cov->noise.covariance;
  r.eigenvalues = basis->eigenvalues;
  r.transform = linalg::first_columns(basis->forward, *m);
  r.data_pixels = total.data.count;
  r.noise_pixels = total.noise.count;
  r.excluded_pixels = total.excluded_pixels();
  r.backend = "cpu";
  r.source_file = "campaign " + job.name;
  return mnf::write_stats_file(stats_path, r);
}

}  // namespace

CampaignResult build_campaign_basis(const JobSpec& job, const std::map<std::string, std::string>& mine,
                                    const std::string& stats_path, const mpi::Comm& comm) {
  CampaignResult result;
  mnf::PipelineOptions options;
  options.estimator = *mnf::noise_estimator_from_name(job.mnf.noise);
  auto ops = mnf::make_tile_ops(*backend_kind_from_name(job.backend));
  std::map<std::string, mnf::SceneStatistics> gathered;
  std::int64_t scene_bands = 0;
  for (const auto& [name, path] : mine) {
    if (!job.mnf.resample_to.empty()) io::set_scene_band_target(path, job.mnf.resample_to);
    auto cube = io::open_cube(path);
    auto stats = !ops ? Result<mnf::SceneStatistics>(ops.error())
                 : !cube  ? Result<mnf::SceneStatistics>(cube.error())
                          : mnf::gather_statistics(**cube, **ops, mpi::Comm::self(), options);
    if (!stats) {
      result.failed[name] = stats.error().line();
      continue;
    }
    scene_bands = (*cube)->info().shape.bands;
    result.bytes_read += scene_bytes(path);
    result.pixels += stats->pixels;
    gathered.emplace(name, std::move(*stats));
  }
  const auto gathered_order = holders(names_of(gathered), comm);
  if (gathered_order.empty()) {
    result.status = Error{ErrorKind::bad_input, job.file, "mnf.basis", "no scene gave statistics for a campaign basis"};
    return result;
  }
  std::optional<mnf::SceneStatistics> reference;
  if (const auto at = gathered.find(gathered_order.front().first); at != gathered.end()) reference = at->second;
  share_reference(reference, gathered_order.front().second, comm);
  reference->estimator = options.estimator;
  mnf::SceneStatistics total = *reference;
  total.data = mnf::Moments::zero(reference->data.shift);
  total.noise = mnf::Moments::zero(reference->noise.shift);
  total.pixels = 0;
  for (auto it = gathered.begin(); it != gathered.end();) {
    auto& [name, s] = *it;
    if (s.rules.bands != reference->rules.bands) {
      result.failed[name] = bad_input(mine.at(name), "bands", "its bands differ from the campaign's first scene").line();
      it = gathered.erase(it);
      continue;
    }
    move_shift(s.data, total.data.shift);
    move_shift(s.noise, total.noise.shift);
    ++it;
  }
  fold_in_name_order(total, holders(names_of(gathered), comm), gathered, comm);
  if (comm.is_parallel()) MPI_Allreduce(MPI_IN_PLACE, &scene_bands, 1, MPI_INT64_T, MPI_MAX, comm.handle());
  Status written;
  if (comm.is_root()) written = write_basis(job, total, scene_bands, stats_path);
  // Every rank learns whether rank 0 wrote the basis.
  if (comm.any(!written.ok()) && written.ok())
    written = Error{ErrorKind::internal, stats_path, "mnf", "rank 0 could not build the campaign basis"};
  result.status = written;
  return result;
}

}  // namespace hb::jobs
