#include "src/dedup/dedup.hpp"

#include <cstring>
#include <functional>

#include "kernels/dedup/fingerprint.hpp"
#include "src/hash/cpu_table.hpp"
#if defined(HB_HAVE_CUDA)
#include "kernels/dedup/representatives.cuh"
#endif

namespace hb::dedup {
namespace {

bool rows_equal(std::span<const float> rows, std::int64_t dims, std::int64_t a, std::int64_t b) {
  return std::memcmp(rows.data() + a * dims, rows.data() + b * dims, static_cast<std::size_t>(dims) * sizeof(float)) == 0;
}

// Per row, the row it duplicates (kCollision rows aside). A collision re-keys the row
// with the next fingerprint of a chain (mix(fp + attempt)) until it lands on its equal
// or on a free key. `only`: the rows to resolve (all when empty).
void cpu_representatives(std::span<const float> rows, std::int64_t dims, std::vector<std::int64_t>& rep,
                         std::span<const std::int64_t> only) {
  const auto n = static_cast<std::int64_t>(only.empty() ? rep.size() : only.size());
  hash::CpuHopscotchTable table(static_cast<std::uint32_t>(std::min<std::int64_t>(hash::kMaxCapacity, n + n / 4 + 1024)));
  for (std::int64_t k = 0; k < n; ++k) {
    const std::int64_t i = only.empty() ? k : only[static_cast<std::size_t>(k)];
    const std::uint64_t fp = fingerprint(rows.data() + i * dims, dims);
    rep[static_cast<std::size_t>(i)] = i;
    for (std::uint64_t attempt = 0; attempt < 64; ++attempt) {
      const hash::OpResult r = table.insert(attempt == 0 ? fp : hash::mix(fp + attempt), static_cast<std::uint32_t>(i));
      if (r.status != hash::OpStatus::exists) break;  // inserted, or no slot: the row stands for itself
      if (rows_equal(rows, dims, i, r.value)) {
        rep[static_cast<std::size_t>(i)] = r.value;
        break;
      }
    }
  }
}

// Classes from representatives that are each class's lowest row (a fixed point, below
// its copies), in one pass: a row that stands for itself opens the next unique, a copy
// takes its representative's. One pass and no scratch vector: on a probe's 1.8 M rows,
// three passes and two scratch vectors took 50-70 ms, most of the probe (H100 host).
Duplicates from_representatives(const std::vector<std::int64_t>& rep) {
  Duplicates d;
  d.inverse.resize(rep.size());
  d.unique_rows.reserve(rep.size());
  for (std::size_t i = 0; i < rep.size(); ++i) {
    const auto r = static_cast<std::size_t>(rep[i]);
    if (r == i) {
      d.inverse[i] = static_cast<std::int64_t>(d.unique_rows.size());
      d.unique_rows.push_back(static_cast<std::int64_t>(i));
    } else {
      d.inverse[i] = d.inverse[r];
    }
  }
  return d;
}

bool use_gpu(BackendKind backend) {
  return backend == BackendKind::cuda || (backend == BackendKind::automatic && cuda_device_count() > 0);
}

}  // namespace

std::optional<Mode> mode_from_name(std::string_view name) {
  if (name == "auto") return Mode::automatic;
  if (name == "on") return Mode::on;
  if (name == "off") return Mode::off;
  return std::nullopt;
}

std::string_view mode_name(Mode m) { return m == Mode::automatic ? "auto" : m == Mode::on ? "on" : "off"; }

#if defined(HB_HAVE_CUDA)
namespace {

// The GPU's representatives made whole: collided rows resolved on the host (their rows
// fetched by `host_rows`), then every row pointed at the lowest row of its class, since
// a GPU representative may be a later row than its copy: unique_rows then ascends and
// representatives are fixed points.
Result<Duplicates> from_gpu_representatives(std::vector<std::int64_t> rep, std::int64_t dims,
                                            const std::function<Result<std::span<const float>>()>& host_rows) {
  const std::size_t n = rep.size();
  std::vector<std::int64_t> collided;
  for (std::size_t i = 0; i < n; ++i)
    if (rep[i] == kCollision) collided.push_back(static_cast<std::int64_t>(i));
  if (!collided.empty()) {
    auto rows = host_rows();
    if (!rows) return rows.error();
    cpu_representatives(*rows, dims, rep, collided);
  }
  // Most probes find no copy: every row already its own, lowest, representative.
  std::size_t first_copy = 0;
  while (first_copy < n && rep[first_copy] == static_cast<std::int64_t>(first_copy)) ++first_copy;
  if (first_copy < n) {
    std::vector<std::int64_t> lowest(n, -1);
    for (std::size_t i = 0; i < n; ++i) {
      auto& l = lowest[static_cast<std::size_t>(rep[i])];
      if (l < 0) l = static_cast<std::int64_t>(i);
    }
    for (std::size_t i = 0; i < n; ++i) rep[i] = lowest[static_cast<std::size_t>(rep[i])];
  }
  return from_representatives(rep);
}

}  // namespace
#endif

Result<Duplicates> find_duplicates(std::span<const float> rows, std::int64_t dims, BackendKind backend) {
  if (dims <= 0 || rows.size() % static_cast<std::size_t>(dims) != 0)
    return Error{ErrorKind::internal, {}, "dedup", "rows are not a whole number of spectra"};
  if (use_gpu(backend)) {
#if defined(HB_HAVE_CUDA)
    auto gpu = gpu_representatives(rows, dims);
    if (!gpu) return gpu.error();
    return from_gpu_representatives(std::move(*gpu), dims, [rows]() -> Result<std::span<const float>> { return rows; });
#else
    return Error{ErrorKind::usage, {}, "--backend", "this build has no CUDA backend"};
#endif
  }
  std::vector<std::int64_t> rep(rows.size() / static_cast<std::size_t>(dims));
  cpu_representatives(rows, dims, rep, {});
  return from_representatives(rep);
}

Result<Duplicates> find_duplicates_on_device(const float* device_rows, std::int64_t n, std::int64_t dims,
                                             const std::function<Result<std::span<const float>>()>& host_rows) {
  if (dims <= 0 || n < 0) return Error{ErrorKind::internal, {}, "dedup", "rows are not a whole number of spectra"};
#if defined(HB_HAVE_CUDA)
  auto gpu = gpu_representatives_on_device(device_rows, n, dims);
  if (!gpu) return gpu.error();
  if (gpu->empty()) return Duplicates{{}, {}, n};  // every row its own
  return from_gpu_representatives(std::move(*gpu), dims, host_rows);
#else
  (void)device_rows;
  (void)host_rows;
  return Error{ErrorKind::usage, {}, "--backend", "this build has no CUDA backend"};
#endif
}

void keep_unique_rows(std::vector<float>& rows, std::int64_t dims, const Duplicates& d) {
  if (d.unlisted_distinct > 0) return;  // every row is kept where it is
  const auto width = static_cast<std::size_t>(dims);
  for (std::size_t u = 0; u < d.unique_rows.size(); ++u) {
    const auto from = static_cast<std::size_t>(d.unique_rows[u]);
    if (from != u) std::memmove(rows.data() + u * width, rows.data() + from * width, width * sizeof(float));
  }
  rows.resize(d.unique_rows.size() * width);
}

bool AutoRule::use_for_next_tile() {
  if (mode_ != Mode::automatic) return mode_ == Mode::on;
  if (on_) return true;
  if (++tiles_since_probe_ < wait_) return false;
  tiles_since_probe_ = 0;
  return true;
}

void AutoRule::observe(const Duplicates& d) {
  if (mode_ != Mode::automatic) return;
  const bool was_on = on_;
  on_ = d.duplicate_share() >= kWorthShare;
  if (on_) wait_ = kReprobeTiles;
  else if (!was_on) wait_ *= 2;  // a probe that found nothing
}

}  // namespace hb::dedup
