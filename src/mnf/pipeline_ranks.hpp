// The rank side of the MNF pipeline: which rows each rank handles (contiguous blocks of
// a fixed tile grid, balanced by valid pixels), the collective calls a rank with
// nothing left to read must still make, and the sum of per-tile moments in global
// tile order, which makes the statistics bitwise the same for any rank count.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "io/cube.hpp"
#include "mpi/comm.hpp"
#include "mpi/decomposition.hpp"
#include "src/mnf/basis.hpp"
#include "src/mnf/stats.hpp"

#include <functional>

namespace hb::mnf {

struct Decomposition {
  mpi::TileGrid grid;
  std::vector<std::int64_t> cuts;        // comm.size() + 1 tile indices
  std::vector<std::int64_t> tile_valid;  // valid pixels per tile (estimated or exact)

  mpi::Block block(int rank) const { return mpi::block_of(grid, cuts, rank); }
  std::int64_t max_tiles() const { return mpi::max_tiles(cuts); }
};

// Blocks of `grid` for `parts` ranks, balanced by valid pixels (mpi::cuts_by_valid_pixels).
Decomposition balance(const mpi::TileGrid& grid, std::vector<std::int64_t> tile_valid, std::int64_t samples,
                      int parts);

// The cheap counting pass: valid pixels of each tile estimated from its middle row
// (one row in `grid.rows_per_tile` is read; probes are dealt round-robin over ranks);
// zeros for one rank, whose block is every row whatever the counts.
Result<std::vector<std::int64_t>> probe_valid_pixels(const io::Cube& cube, const PixelRules& rules,
                                                     const mpi::TileGrid& grid, const mpi::Comm& comm);

// True when reads of `cube` are collective (HDF5 opened over several ranks): every rank
// must then make the same number of read calls, empty ones included.
bool collective_reads(const io::Cube& cube, const mpi::Comm& comm);
// A rank's part in a collective read when it has no rows left (no-op otherwise).
Status read_nothing(const io::Cube& cube, const mpi::Comm& comm);

// Σ of moments of "granules" (fixed runs of scene rows: one row on the CPU) over a
// binary tree fixed by global granule index: a node is the sum of its two aligned
// halves, the root the left-to-right sum of the maximal aligned blocks. The tree does
// not depend on the tile size or on the rank count, so neither do the bits of the sum.
// A rank pushes its granules in order (its stack then holds the maximal aligned blocks
// of its rows, O(log rows) of them); total() hands the stacks down the ranks, each rank
// pushing its blocks onto the stack of the ranks before it, and broadcasts the root.
class TreeSum {
 public:
  explicit TreeSum(std::vector<double> shift) : shift_(std::move(shift)) {}
  // `granule` must follow the previously pushed one (or start this rank's run).
  Status push(std::int64_t granule, Moments moments);
  // Collective: the sum over every rank's granules, on every rank.
  Result<Moments> total(const mpi::Comm& comm);

 private:
  struct Node {
    std::int64_t first = 0;  // granule index of the block's start
    int level = 0;           // the block covers 2^level granules
    Moments value;
  };
  Status push_node(Node node);
  std::vector<double> serialise() const;
  Status push_serialised(std::span<const double> buffer);

  std::vector<double> shift_;
  std::vector<Node> stack_;
};

// The basis computed once, on rank 0 with single-threaded BLAS/LAPACK, and broadcast:
// threaded LAPACK rounds differently with the thread count (which changes with how
// many ranks share a node), and nodes may differ in CPU features. So every rank of
// every run uses the same bits. Warnings are kept (and logged) on rank 0.
Result<Basis> basis_from_root(const std::function<Result<Basis>()>& compute, const mpi::Comm& comm);

}  // namespace hb::mnf
