#include "src/mnf/pipeline_ranks.hpp"

#include <algorithm>

#include "src/base/parallel_for.hpp"
#include "mpi/agree.hpp"
#include "src/mnf/cpu_tile_ops.hpp"
#include "src/linalg/blas_threads.hpp"

namespace hb::mnf {
namespace {

constexpr int kFoldTag = 7101;

Result<std::int64_t> valid_in_row(const io::Cube& cube, const PixelRules& rules, std::int64_t row) {
  auto tile = cube.read_tile({row, row + 1});
  if (!tile) return tile.error();
  auto wide = cpu::detail::widen(*tile, rules, tile->held());
  if (!wide) return wide.error();
  return static_cast<std::int64_t>(std::count(wide->valid.begin(), wide->valid.end(), std::uint8_t{1}));
}

void broadcast_matrix(linalg::Matrix& m, const mpi::Comm& comm) {
  std::int64_t shape[2] = {m.rows, m.cols};
  comm.broadcast(shape);
  m.rows = shape[0];
  m.cols = shape[1];
  m.data.resize(static_cast<std::size_t>(m.rows * m.cols));
  comm.broadcast(m.data);
}

void broadcast_vector(std::vector<double>& v, const mpi::Comm& comm) {
  std::int64_t size[1] = {static_cast<std::int64_t>(v.size())};
  comm.broadcast(size);
  v.resize(static_cast<std::size_t>(size[0]));
  comm.broadcast(v);
}

}  // namespace

Result<Basis> basis_from_root(const std::function<Result<Basis>()>& compute, const mpi::Comm& comm) {
  Basis basis;
  Status local;
  if (comm.is_root()) {
    const linalg::SingleThreadedBlas guard;
    auto computed = compute();
    if (computed) basis = std::move(*computed);
    else local = computed.error();
  }
  if (!comm.is_parallel()) {
    if (!local.ok()) return local.error();
    return basis;
  }
  HB_TRY(mpi::agree(local, comm));
  std::int64_t header[2] = {static_cast<std::int64_t>(basis.method), basis.dropped_directions};
  comm.broadcast(header);
  basis.method = static_cast<Method>(header[0]);
  basis.dropped_directions = header[1];
  std::vector<std::int64_t> bands = basis.bands;
  std::int64_t count[1] = {static_cast<std::int64_t>(bands.size())};
  comm.broadcast(count);
  bands.resize(static_cast<std::size_t>(count[0]));
  comm.broadcast(bands);
  basis.bands = std::move(bands);
  broadcast_vector(basis.mean, comm);
  broadcast_vector(basis.eigenvalues, comm);
  broadcast_matrix(basis.forward, comm);
  broadcast_matrix(basis.inverse, comm);
  return basis;
}

Decomposition balance(const mpi::TileGrid& grid, std::vector<std::int64_t> tile_valid, std::int64_t samples,
                      int parts) {
  auto cuts = mpi::cuts_by_valid_pixels(grid, tile_valid, samples, parts);
  return {grid, std::move(cuts), std::move(tile_valid)};
}

bool collective_reads(const io::Cube& cube, const mpi::Comm& comm) {
  return comm.is_parallel() && cube.format() == io::CubeFormat::hdf5;
}

Status read_nothing(const io::Cube& cube, const mpi::Comm& comm) {
  if (!collective_reads(cube, comm)) return {};
  return cube.read_rows({0, 0}, {});
}

Result<std::vector<std::int64_t>> probe_valid_pixels(const io::Cube& cube, const PixelRules& rules,
                                                     const mpi::TileGrid& grid, const mpi::Comm& comm) {
  const std::int64_t tiles = grid.count();
  std::vector<std::int64_t> valid(static_cast<std::size_t>(tiles), 0);
  // One rank takes every row whatever the counts: no row is read (in `run` the pool's
  // threads are often hashing the scene beside the pass, and these reads queued behind
  // them for up to 0.1 s a scene).
  if (!comm.is_parallel()) return valid;
  const auto probe = [&](std::int64_t t) -> Status {
    const auto rows = grid.rows(t);
    auto count = valid_in_row(cube, rules, rows.begin + rows.rows() / 2);
    if (!count) return count.error();
    valid[static_cast<std::size_t>(t)] = *count * rows.rows();
    return {};
  };
  // This rank probes every comm.size()-th tile.
  const std::int64_t mine = (tiles - comm.rank() + comm.size() - 1) / comm.size();
  const auto tile_of = [&](std::int64_t i) { return i * comm.size() + comm.rank(); };
  Status local;
  if (cube.format() == io::CubeFormat::envi) {
    // Independent preads: on host threads (one thread took 0.45 s for a 40 GB scene's
    // 1032 probes, before the statistics pass could start). The first failure in tile
    // order is the one reported, whatever the threads' timing.
    std::vector<Status> outcome(static_cast<std::size_t>(mine));
    parallel_for(mine, 8, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) outcome[static_cast<std::size_t>(i)] = probe(tile_of(i));
    });
    const auto failed = std::find_if(outcome.begin(), outcome.end(), [](const Status& s) { return !s.ok(); });
    if (failed != outcome.end()) local = *failed;
  } else {
    // HDF5: the library is not thread-safe, and collective reads are made in step, so
    // a rank past its probes still takes part in every read.
    const std::int64_t calls = (tiles + comm.size() - 1) / comm.size();
    for (std::int64_t c = 0; c < calls; ++c) {
      if (c >= mine || !local.ok()) {
        const Status s = read_nothing(cube, comm);
        if (local.ok() && !s.ok()) local = s;
        continue;
      }
      local = probe(tile_of(c));
    }
  }
  HB_TRY(mpi::agree(local, comm));
  comm.allreduce_sum(valid);  // each tile was counted by one rank: exact
  return valid;
}

Status TreeSum::push(std::int64_t granule, Moments moments) {
  return push_node({granule, 0, std::move(moments)});
}

Status TreeSum::push_node(Node node) {
  stack_.push_back(std::move(node));
  // Merge siblings: two blocks of one level whose union is an aligned block.
  while (stack_.size() >= 2) {
    Node& right = stack_.back();
    Node& left = stack_[stack_.size() - 2];
    const std::int64_t span = std::int64_t{1} << left.level;
    if (left.level != right.level || left.first % (2 * span) != 0 || right.first != left.first + span) break;
    HB_TRY(merge(left.value, right.value));
    ++left.level;
    stack_.pop_back();
  }
  return {};
}

std::vector<double> TreeSum::serialise() const {
  std::vector<double> buffer{static_cast<double>(stack_.size())};
  for (const auto& node : stack_) {
    buffer.push_back(static_cast<double>(node.first));
    buffer.push_back(static_cast<double>(node.level));
    const auto packed = pack(node.value);
    buffer.insert(buffer.end(), packed.begin(), packed.end());
  }
  return buffer;
}

Status TreeSum::push_serialised(std::span<const double> buffer) {
  const auto nodes = static_cast<std::size_t>(buffer[0]);
  const std::size_t moments_size = 1 + shift_.size() + shift_.size() * shift_.size();
  std::size_t at = 1;
  for (std::size_t i = 0; i < nodes; ++i) {
    Node node{static_cast<std::int64_t>(buffer[at]), static_cast<int>(buffer[at + 1]), Moments::zero(shift_)};
    unpack(buffer.subspan(at + 2, moments_size), node.value);
    at += 2 + moments_size;
    HB_TRY(push_node(std::move(node)));
  }
  return {};
}

Result<Moments> TreeSum::total(const mpi::Comm& comm) {
  const int rank = comm.rank();
  const int size = comm.size();
  Status local;
  if (rank > 0) {
    // The stack of ranks [0, rank) goes under this rank's blocks.
    std::vector<double> length(1);
    comm.recv(length, rank - 1, kFoldTag);
    std::vector<double> incoming(static_cast<std::size_t>(length[0]));
    comm.recv(incoming, rank - 1, kFoldTag);
    std::vector<Node> mine = std::move(stack_);
    stack_.clear();
    local = push_serialised(incoming);
    for (auto& node : mine)
      if (local.ok()) local = push_node(std::move(node));
  }
  if (rank + 1 < size) {
    const auto outgoing = serialise();
    const std::vector<double> length{static_cast<double>(outgoing.size())};
    comm.send(length, rank + 1, kFoldTag);
    comm.send(outgoing, rank + 1, kFoldTag);
  }
  // The last rank holds the whole scene's blocks: their left-to-right sum is the root.
  Moments root = Moments::zero(shift_);
  if (rank + 1 == size)
    for (const auto& node : stack_)
      if (local.ok()) local = merge(root, node.value);
  auto buffer = pack(root);
  comm.broadcast(buffer, size - 1);
  unpack(buffer, root);
  HB_TRY(mpi::agree(local, comm));
  return root;
}

}  // namespace hb::mnf
