// Logging set up once per process: stderr, rank-prefixed when there are several ranks.
#pragma once

#include <spdlog/spdlog.h>

namespace hb::cli {

enum class Verbosity { quiet, normal, verbose };

void configure_logging(Verbosity verbosity, int rank, int ranks);

// Seconds since this process was started (exec, libraries, MPI start-up included), from
// /proc to 10 ms; -1 where /proc cannot say. The -v log's first and last lines carry it,
// so that a timed run can tell launch and exit from the command's own work.
double seconds_since_process_start();

}  // namespace hb::cli
