#include "jobs/metrics.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>

namespace hb::jobs {
namespace {

void add_rates(nlohmann::json& s) {
  const double seconds = s.value("seconds", 0.0);
  const auto bytes = static_cast<double>(s.value("bytes_read", std::int64_t{0}));
  s["read_mb_per_s"] = seconds > 0 ? bytes / 1e6 / seconds : 0.0;
  s["pixels_per_s"] = seconds > 0 ? static_cast<double>(s.value("pixels", std::int64_t{0})) / seconds : 0.0;
}

std::string versions_mpi() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string v(text, static_cast<std::size_t>(length));
  return v.substr(0, v.find_first_of(",\n"));
}

}  // namespace

nlohmann::json RankMetrics::to_json(int rank, const std::string& backend, const std::string& device) const {
  nlohmann::json stages = nlohmann::json::object();
  double total = 0;
  for (const auto& r : records_) {
    auto& s = stages[r.step];
    if (s.is_null()) s = {{"seconds", 0.0}, {"bytes_read", 0}, {"bytes_written", 0}, {"pixels", 0},
                          {"done", 0},      {"skipped", 0},    {"failed", 0}};
    s["seconds"] = s["seconds"].get<double>() + r.seconds;
    s["bytes_read"] = s["bytes_read"].get<std::int64_t>() + r.bytes_read;
    s["bytes_written"] = s["bytes_written"].get<std::int64_t>() + r.bytes_written;
    s["pixels"] = s["pixels"].get<std::int64_t>() + r.pixels;
    s[r.status] = s[r.status].get<int>() + 1;
    total += r.seconds;
  }
  for (auto& [name, s] : stages.items()) add_rates(s);
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return {{"rank", rank},       {"host", mpi::host_name()}, {"backend", backend},
          {"device", device},   {"cuda_visible_devices", visible != nullptr ? visible : ""},
          {"seconds", total},   {"stages", stages}};
}

nlohmann::json gather_json(const nlohmann::json& mine, const mpi::Comm& comm) {
  if (!comm.is_parallel()) return nlohmann::json::array({mine});
  const std::string text = mine.dump();
  int length = static_cast<int>(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(comm.size()));
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm.handle());
  std::vector<int> offsets(lengths.size(), 0);
  for (std::size_t i = 1; i < lengths.size(); ++i) offsets[i] = offsets[i - 1] + lengths[i - 1];
  std::string all(comm.is_root() ? static_cast<std::size_t>(offsets.back() + lengths.back()) : 0, '\0');
  MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, comm.handle());
  nlohmann::json out = nlohmann::json::array();
  if (!comm.is_root()) return out;
  for (std::size_t i = 0; i < lengths.size(); ++i)
    out.push_back(nlohmann::json::parse(all.substr(static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(lengths[i]))));
  return out;
}

nlohmann::json run_metrics(const nlohmann::json& per_rank, const std::string& job, const std::string& run_id,
                           double wall_seconds, int shard, int shards, int ranks) {
  nlohmann::json stages = nlohmann::json::object();
  std::set<std::string> hosts;
  int gpus = 0;  // ranks that ran on a GPU: one GPU each
  for (const auto& r : per_rank) {
    hosts.insert(r["host"].get<std::string>());
    if (r["backend"] == "cuda") ++gpus;
    for (const auto& [name, s] : r["stages"].items()) {
      auto& t = stages[name];
      if (t.is_null()) t = {{"seconds", 0.0}, {"max_rank_seconds", 0.0}, {"bytes_read", 0}, {"bytes_written", 0},
                            {"pixels", 0},    {"done", 0},               {"skipped", 0},    {"failed", 0}};
      for (const char* key : {"bytes_read", "bytes_written", "pixels"}) t[key] = t[key].get<std::int64_t>() + s[key].get<std::int64_t>();
      for (const char* key : {"done", "skipped", "failed"}) t[key] = t[key].get<int>() + s[key].get<int>();
      t["seconds"] = t["seconds"].get<double>() + s["seconds"].get<double>();
      t["max_rank_seconds"] = std::max(t["max_rank_seconds"].get<double>(), s["seconds"].get<double>());
    }
  }
  for (auto& [name, t] : stages.items()) add_rates(t);
  unsigned h5_major = 0, h5_minor = 0, h5_release = 0;
  H5get_libversion(&h5_major, &h5_minor, &h5_release);
  return {{"format", "hyperbatch-metrics/1"},
          {"job", job},
          {"run_id", run_id},
          {"ranks", ranks},
          {"shard", shard},
          {"shards", shards},
          {"hosts", hosts},
          {"gpus", gpus},
          {"wall_seconds", wall_seconds},
          {"versions",
           {{"hyperbatch", HB_VERSION},
            {"mpi", versions_mpi()},
            {"hdf5", std::to_string(h5_major) + "." + std::to_string(h5_minor) + "." + std::to_string(h5_release)}}},
          {"stages", stages},
          {"per_rank", per_rank}};
}

}  // namespace hb::jobs
