// hyperbatch: the command-line edge. Errors become one line on stderr and an exit code.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <exception>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "mpi/comm.hpp"
#include "src/backend/backend.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/log.hpp"
#include "src/cli/signals.hpp"

int main(int argc, char** argv) {
  hb::cli::stop_cleanly_on_signals();
  hb::mpi::Runtime mpi_runtime(&argc, &argv);
  const std::jthread device_warm_up = hb::warm_up_device();  // joined before MPI ends
  const auto world = hb::mpi::Comm::world();

  CLI::App app{"hyperbatch: reduce and classify hyperspectral scenes at archive scale", "hyperbatch"};
  app.set_version_flag("--version", std::string("hyperbatch ") + HB_VERSION);
  app.require_subcommand(1);
  bool verbose = false;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "More detail in the log")->configurable(false);
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors");

  std::vector<hb::cli::Registered> commands{
      hb::cli::register_info(app), hb::cli::register_ingest(app), hb::cli::register_export(app),
      hb::cli::register_synth(app), hb::cli::register_mnf(app), hb::cli::register_pca(app),
      hb::cli::register_knn(app), hb::cli::register_sam(app), hb::cli::register_run(app),
      hb::cli::register_submit(app)};
  // Global flags are accepted after the subcommand too.
  for (auto& command : commands) command.app->fallthrough();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return world.is_root() || e.get_exit_code() != 0 ? app.exit(e) : 0;
  }

  using hb::cli::Verbosity;
  hb::cli::configure_logging(quiet ? Verbosity::quiet : verbose ? Verbosity::verbose : Verbosity::normal,
                             world.rank(), world.size());
  spdlog::debug("hyperbatch {} up {:.2f} s after the process started (exec, libraries, MPI start-up)", HB_VERSION,
                hb::cli::seconds_since_process_start());
  // The last line before MPI and CUDA shut down: what a timed run takes after it is exit.
  struct LogEnd {
    ~LogEnd() {
      spdlog::debug("hyperbatch done {:.2f} s after the process started", hb::cli::seconds_since_process_start());
    }
  } const log_end;

  for (auto& command : commands) {
    if (!command.app->parsed()) continue;
    hb::Status status;
    try {
      status = command.action();
    } catch (const std::exception& e) {
      // An exception on one rank would leave the others waiting in a collective:
      // with several ranks, print the cause and abort the whole job.
      const bool memory = dynamic_cast<const std::bad_alloc*>(&e) != nullptr;
      const std::string cause = memory ? "out of memory" : std::string("internal error: ") + e.what();
      const int code = memory ? static_cast<int>(hb::ErrorKind::resource) : static_cast<int>(hb::ErrorKind::internal);
      if (world.is_parallel()) hb::mpi::abort_job(world, cause, code);
      fmt::print(stderr, "hyperbatch: error: {}\n", cause);
      return code;
    }
    if (status.ok()) return hb::cli::kExitSuccess;
    if (world.is_parallel())
      fmt::print(stderr, "hyperbatch: error on rank {} ({}): {}\n", world.rank(), hb::mpi::host_name(),
                 status.error().line());
    else
      fmt::print(stderr, "hyperbatch: error: {}\n", status.error().line());
    return status.error().exit_code();
  }
  return hb::cli::kExitUsage;
}
