#include "src/knn/rank_training.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "mpi/agree.hpp"
#include "mpi/decomposition.hpp"
#include "src/classify/scene_pass.hpp"
#include "src/classify/training_file.hpp"
#include "src/knn/ring.hpp"

namespace hb::knn {
namespace {

// Training rows per search chunk when --train-chunk-rows does not say. The CPU's GEMM
// blocks and selections were measured on 8192-row chunks (src/knn/README.md). The GPU's
// slabs are sized for a whole chunk of up to 2^17 rows (tensor: 4096 rows by 2^17 in
// 2 GiB; fast's block path: eight waves by the chunk): on 8192-row chunks a 10^5-row
// set paid 13 merges of every list per tile.
std::int64_t default_chunk_rows(bool on_gpu) { return on_gpu ? std::int64_t{1} << 17 : 8192; }

// Valid pixels balancing needs no pass over the scene: exact from a mask, or estimated
// from every stride-th row (each rank reading those of its even share), about
// kBalanceRows rows.
constexpr std::int64_t kBalanceRows = 1024;

Result<std::vector<std::int64_t>> valid_per_row(const io::Cube& cube, const classify::BandSelection& selection,
                                                const std::vector<std::uint8_t>& mask, const mpi::Comm& comm) {
  const auto& shape = cube.info().shape;
  std::vector<std::int64_t> rows(static_cast<std::size_t>(shape.lines));
  if (!mask.empty()) {
    for (std::int64_t r = 0; r < shape.lines; ++r)
      rows[static_cast<std::size_t>(r)] = std::count(mask.begin() + r * shape.samples,
                                                     mask.begin() + (r + 1) * shape.samples, std::uint8_t{1});
    return rows;
  }
  const std::int64_t stride = std::max<std::int64_t>(1, (shape.lines + kBalanceRows - 1) / kBalanceRows);
  const auto share = mpi::even_rows(shape.lines, comm);
  std::vector<RowRange> sampled;
  for (std::int64_t r = (share.begin + stride - 1) / stride * stride; r < share.end; r += stride) sampled.push_back({r, r + 1});
  std::vector<std::int64_t> mine;
  Status read = classify::for_each_validity_tile(cube, selection, sampled, [&](std::span<const std::uint8_t> valid) {
    mine.push_back(std::count(valid.begin(), valid.end(), std::uint8_t{1}));
  });
  auto counts = gathered(read ? Result<std::vector<std::int64_t>>(std::move(mine))
                              : Result<std::vector<std::int64_t>>(read.error()), comm);
  if (!counts) return counts.error();
  for (std::int64_t r = 0; r < shape.lines; ++r) rows[static_cast<std::size_t>(r)] = (*counts)[static_cast<std::size_t>(r / stride)];
  return rows;
}

// The training mean from every rank's shard, summed exactly (FixedSum): the same bits
// for any rank count.
Result<std::vector<double>> shared_shift(const std::vector<float>& rows, std::int64_t first, std::int64_t dims,
                                         std::int64_t total, Metric metric, const std::string& source,
                                         const mpi::Comm& comm) {
  FixedSum mine(dims);
  HB_TRY(mpi::agree(mine.add(rows.data(), static_cast<std::int64_t>(rows.size()) / std::max<std::int64_t>(dims, 1),
                             source, first),
                    comm));
  FixedSum sum(dims);
  for (int r = 0; r < comm.size(); ++r) {
    FixedSum part(dims);
    part.high() = mine.high();
    part.low() = mine.low();
    comm.broadcast(part.high(), r);
    std::vector<std::int64_t> low(part.low().begin(), part.low().end());
    comm.broadcast(low, r);
    std::copy(low.begin(), low.end(), part.low().begin());
    sum.add(part);
  }
  if (!metric_is_shift_invariant(metric)) return std::vector<double>(static_cast<std::size_t>(dims), 0.0);
  return sum.mean(total);
}

// Rows [count r/P, count (r+1)/P) of rank r.
RowRange shard_of(std::int64_t count, const mpi::Comm& comm) {
  return {count * comm.rank() / comm.size(), count * (comm.rank() + 1) / comm.size()};
}

}  // namespace

Result<RankTraining> rank_training(const KnnJob& job, const io::Cube& scene, const classify::BandSelection& selection,
                                   std::int64_t tile_rows, const TruthRows& truth, const mpi::Comm& comm) {
  RankTraining out;
  Status local;
  if (job.train_file.empty()) {
    auto drawn = draw_training(job, scene, selection, tile_rows, truth, comm);
    if (!drawn) return drawn.error();
    if (drawn->pixels.empty()) return bad_input(job.truth, "data", "no labelled pixel with usable scene data");
    const auto mine = shard_of(static_cast<std::int64_t>(drawn->pixels.size()), comm);
    out.first = mine.begin;
    auto features = classify::gather_features(
        scene, selection, std::span<const std::int64_t>(drawn->pixels).subspan(static_cast<std::size_t>(mine.begin),
                                                                              static_cast<std::size_t>(mine.rows())),
        tile_rows);
    if (features) out.set.features = classify::memory_training_source(std::move(*features), selection.dims(), job.scene);
    else local = features.error();
    out.set.labels = std::move(drawn->labels);
    out.set.pixels = std::move(drawn->pixels);
    out.set.wavelength = selection.wavelength;
    out.set.classes = {truth.meta.class_names, truth.meta.class_lookup};
    out.valid = std::move(drawn->valid);
  } else {
    auto file = classify::read_training_file(job.train_file);
    HB_TRY(mpi::agree(file ? Status{} : Status{file.error()}, comm));
    out.set = std::move(*file);
    if (out.set.classes.names.empty()) out.set.classes = {truth.meta.class_names, truth.meta.class_lookup};
    local = classify::check_compatible(out.set, selection, job.scene);
    if (comm.is_parallel() && local.ok()) {  // one rank streams the file; several hold their shards
      const auto mine = shard_of(out.rows(), comm);
      out.first = mine.begin;
      std::vector<float> rows(static_cast<std::size_t>(mine.rows() * selection.dims()));
      local = out.set.features->read(mine.begin, mine.rows(), rows.data());
      if (local.ok()) out.set.features = classify::memory_training_source(std::move(rows), selection.dims(), job.train_file);
    }
  }
  HB_TRY(mpi::agree(local, comm));
  return out;
}

Result<std::vector<float>> all_training_rows(const RankTraining& training, const mpi::Comm& comm) {
  const auto& source = *training.set.features;
  std::vector<float> mine(static_cast<std::size_t>(source.count() * source.dims()));
  const Status read = source.read(0, source.count(), mine.data());
  return gathered(read ? Result<std::vector<float>>(std::move(mine)) : Result<std::vector<float>>(read.error()), comm);
}

Result<SearchableTraining> searchable(const RankTraining& training, const KnnJob& job, const mpi::Comm& comm) {
  SearchableTraining out;
  const auto& source = *training.set.features;
  const Metric metric = job.classify.metric;
  if (!comm.is_parallel()) {
    auto prepared = PreparedTraining::prepare(source, metric, job.train_cache_bytes);
    if (!prepared) return prepared.error();
    out.prepared = std::make_unique<PreparedTraining>(std::move(*prepared));
    out.shift = out.prepared->shift();
    out.chunks = prepared_chunks(*out.prepared);
    return out;
  }
  const std::int64_t dims = source.dims();
  Shard shard{std::vector<float>(static_cast<std::size_t>(source.count() * dims)), training.first, source.count()};
  HB_TRY(mpi::agree(source.read(0, shard.count, shard.rows.data()), comm));
  auto shift = shared_shift(shard.rows, shard.first, dims, training.rows(), metric, source.name(), comm);
  if (!shift) return shift.error();
  out.shift = std::move(*shift);
  for (std::size_t i = 0; i < shard.rows.size(); ++i)
    shard.rows[i] = static_cast<float>(static_cast<double>(shard.rows[i]) - out.shift[i % static_cast<std::size_t>(dims)]);
  const auto bytes = training.rows() * dims * static_cast<std::int64_t>(sizeof(float));
  const ShardMode mode = choose_shard_mode(job.shard_mode, bytes, comm.size(), job.train_cache_bytes);
  spdlog::info("knn across {} ranks: {} training rows ({} MB) {}", comm.size(), training.rows(), bytes / 1000000,
               mode == ShardMode::ring ? "sharded round a ring" : "allgathered");
  out.chunks = shard_chunks(std::move(shard), dims, mode, comm);
  return out;
}

void size_chunks(SearchableTraining& search, const KnnJob& job, bool on_gpu) {
  if (search.prepared)
    search.prepared->set_chunk_rows(job.train_chunk_rows > 0 ? job.train_chunk_rows : default_chunk_rows(on_gpu));
}

Result<RowRange> query_block(const io::Cube& scene, const classify::BandSelection& selection, std::int64_t tile_rows,
                             const std::vector<std::uint8_t>& valid, const mpi::Comm& comm) {
  const auto& shape = scene.info().shape;
  if (!comm.is_parallel()) return RowRange{0, shape.lines};
  auto per_row = valid_per_row(scene, selection, valid, comm);
  if (!per_row) return per_row.error();
  const mpi::TileGrid grid{shape.lines, mpi::balance_rows(shape.lines, tile_rows, comm.size())};
  const auto cuts = mpi::cuts_by_valid_pixels(grid, mpi::tile_sums(grid, *per_row), shape.samples, comm.size());
  return mpi::block_of(grid, cuts, comm.rank()).rows;
}

}  // namespace hb::knn
