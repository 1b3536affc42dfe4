#include "src/cli/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

namespace hb::cli {

void configure_logging(Verbosity verbosity, int rank, int ranks) {
  auto logger = spdlog::stderr_color_mt("hyperbatch");
  const std::string who = ranks > 1 ? "[rank " + std::to_string(rank) + "/" + std::to_string(ranks) + "] " : "";
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ " + who + "%v");
  switch (verbosity) {
    case Verbosity::quiet: logger->set_level(spdlog::level::warn); break;
    case Verbosity::normal: logger->set_level(spdlog::level::info); break;
    case Verbosity::verbose: logger->set_level(spdlog::level::debug); break;
  }
  // Other ranks speak only when something is wrong, unless asked to be verbose.
  if (rank != 0 && verbosity != Verbosity::verbose) logger->set_level(spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

double seconds_since_process_start() {
  std::ifstream stat("/proc/self/stat"), uptime("/proc/uptime");
  std::string line;
  double up = 0;
  if (!std::getline(stat, line) || !(uptime >> up)) return -1;
  // Field 22, counted after the command name's closing parenthesis (the name may hold spaces).
  std::istringstream fields(line.substr(line.rfind(')') + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {}
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  return fields ? up - std::stod(field) / ticks : -1;
}

}  // namespace hb::cli
