#include "jobs/campaign.hpp"

#include <spdlog/spdlog.h>

#include <optional>

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

void allreduce(mnf::Moments& m, const mpi::Comm& comm) {
  std::int64_t count = m.count;
  comm.allreduce_sum(std::span<std::int64_t>(&count, 1));
  m.count = count;
  comm.allreduce_sum(std::span<double>(m.sum));
  comm.allreduce_sum(std::span<double>(m.cross));
}

// The lowest rank holding statistics broadcasts bands and shifts; every rank then agrees.
bool agree_on_reference(std::optional<mnf::SceneStatistics>& reference, const mpi::Comm& comm) {
  if (!comm.is_parallel()) return reference.has_value();
  int mine = reference ? comm.rank() : comm.size();
  int root = mine;
  MPI_Allreduce(&mine, &root, 1, MPI_INT, MPI_MIN, comm.handle());
  if (root == comm.size()) return false;
  std::int64_t sizes[3] = {0, 0, 0};
  if (comm.rank() == root)
    sizes[0] = reference->rules.used_bands(), sizes[1] = reference->data.bands(), sizes[2] = reference->noise.bands();
  MPI_Bcast(sizes, 3, MPI_INT64_T, root, comm.handle());
  if (comm.rank() != root) {
    reference.emplace();
    reference->rules.bands.resize(static_cast<std::size_t>(sizes[0]));
    reference->data.shift.resize(static_cast<std::size_t>(sizes[1]));
    reference->noise.shift.resize(static_cast<std::size_t>(sizes[2]));
  }
  MPI_Bcast(reference->rules.bands.data(), static_cast<int>(sizes[0]), MPI_INT64_T, root, comm.handle());
  MPI_Bcast(reference->data.shift.data(), static_cast<int>(sizes[1]), MPI_DOUBLE, root, comm.handle());
  MPI_Bcast(reference->noise.shift.data(), static_cast<int>(sizes[2]), MPI_DOUBLE, root, comm.handle());
  return true;
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
  std::vector<std::pair<std::string, mnf::SceneStatistics>> gathered;
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
    gathered.emplace_back(name, std::move(*stats));
  }
  std::optional<mnf::SceneStatistics> reference;
  if (!gathered.empty()) reference = gathered.front().second;
  if (!agree_on_reference(reference, comm)) {
    result.status = Error{ErrorKind::bad_input, job.file, "mnf.basis", "no scene gave statistics for a campaign basis"};
    return result;
  }
  mnf::SceneStatistics total = *reference;
  total.data = mnf::Moments::zero(reference->data.shift);
  total.noise = mnf::Moments::zero(reference->noise.shift);
  total.pixels = 0;
  for (auto& [name, s] : gathered) {
    if (s.rules.bands != reference->rules.bands) {
      result.failed[name] = bad_input(mine.at(name), "bands", "its bands differ from the campaign's first scene").line();
      continue;
    }
    move_shift(s.data, total.data.shift);
    move_shift(s.noise, total.noise.shift);
    const Status a = mnf::merge(total.data, s.data);
    const Status b = mnf::merge(total.noise, s.noise);
    if (!a.ok() || !b.ok()) result.failed[name] = (a.ok() ? b : a).error().line();
    total.pixels += s.pixels;
  }
  allreduce(total.data, comm);
  allreduce(total.noise, comm);
  comm.allreduce_sum(std::span<std::int64_t>(&total.pixels, 1));
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
