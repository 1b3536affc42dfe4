// Logging set up once per process: stderr, rank-prefixed when there are several ranks.
#pragma once

#include <spdlog/spdlog.h>

namespace hb::cli {

enum class Verbosity { quiet, normal, verbose };

void configure_logging(Verbosity verbosity, int rank, int ranks);

}  // namespace hb::cli
