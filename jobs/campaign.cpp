#include "jobs/campaign.hpp"

#include <algorithm>
#include <utility>

#include "io/cube.hpp"
#include "io/resample_view.hpp"
#include "jobs/schedule.hpp"
#include "src/mnf/pipeline.hpp"
#include "src/mnf/run_campaign.hpp"
#include "src/mnf/stats_file.hpp"

namespace hb::jobs {
namespace {

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

// The bands of the first scene in name order, which every scene must share: its holder
// tells every rank.
std::vector<std::int64_t> first_bands(const std::map<std::string, mnf::SceneStatistics>& gathered,
                                      const std::pair<std::string, int>& first, const mpi::Comm& comm) {
  std::vector<std::int64_t> bands;
  if (first.second == comm.rank()) bands = gathered.at(first.first).rules.bands;
  std::vector<std::int64_t> size{static_cast<std::int64_t>(bands.size())};
  comm.broadcast(size, first.second);
  bands.resize(static_cast<std::size_t>(size[0]));
  comm.broadcast(bands, first.second);
  return bands;
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
  const auto bands = first_bands(gathered, gathered_order.front(), comm);
  for (auto it = gathered.begin(); it != gathered.end();) {
    if (it->second.rules.bands == bands) {
      ++it;
      continue;
    }
    result.failed[it->first] =
        bad_input(mine.at(it->first), "bands", "its bands differ from the campaign's first scene").line();
    it = gathered.erase(it);
  }
  // The scenes in name order, summed as one rank would sum them (mnf::sum_in_scene_order).
  std::vector<int> holder_of;
  std::vector<std::string> names;
  std::map<std::size_t, mnf::SceneStatistics> held;
  for (const auto& [name, holder] : holders(names_of(gathered), comm)) {
    if (holder == comm.rank()) held.emplace(names.size(), std::move(gathered.at(name)));
    holder_of.push_back(holder);
    names.push_back(name);
  }
  auto total = mnf::sum_in_scene_order(holder_of, held, names, options, comm);
  if (!total) {
    result.status = total.error();
    return result;
  }
  if (comm.is_parallel()) MPI_Allreduce(MPI_IN_PLACE, &scene_bands, 1, MPI_INT64_T, MPI_MAX, comm.handle());
  Status written;
  if (comm.is_root()) written = write_basis(job, *total, scene_bands, stats_path);
  // Every rank learns whether rank 0 wrote the basis.
  if (comm.any(!written.ok()) && written.ok())
    written = Error{ErrorKind::internal, stats_path, "mnf", "rank 0 could not build the campaign basis"};
  result.status = written;
  return result;
}

}  // namespace hb::jobs
