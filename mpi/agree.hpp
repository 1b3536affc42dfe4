// How a failure on one rank becomes everyone's: every collective phase ends with
// agree(), so that no rank goes on into a collective call that another rank will never
// make (a hang), and every rank reports who failed and why.
#pragma once

#include "src/base/error.hpp"
#include "mpi/comm.hpp"

namespace hb::mpi {

// With one rank, returns `local`. With several: OK on every rank when every rank is
// OK; otherwise a failing rank returns its own error and the others return an error of
// the same kind saying "rank R (HOST) failed: CAUSE" for the lowest failing rank R.
Status agree(Status local, const Comm& comm);

// A one-rank command under a launcher: rank 0 passes its outcome, the other ranks wait
// for it (sleeping, not spinning, so rank 0 keeps the cores), then agree() on it: rank 0
// returns its own, the others "rank 0 (HOST) failed: CAUSE" of the same kind.
Status outcome_of_root(Status root_outcome, const Comm& comm);

}  // namespace hb::mpi
