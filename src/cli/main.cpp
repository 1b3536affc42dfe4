// hyperbatch: the command-line edge. Errors become one line on stderr and an exit code.
#include <CLI/CLI.hpp>
#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "io/hdf5_handle.hpp"
#include "mpi/agree.hpp"
#include "mpi/comm.hpp"
#include "src/backend/backend.hpp"
#include "src/cli/commands.hpp"
#include "src/cli/log.hpp"
#include "src/cli/signals.hpp"

namespace {

std::string command_list(const CLI::App& app) {
  std::string names;
  for (const auto* command : app.get_subcommands([](const CLI::App*) { return true; }))
    names += (names.empty() ? "" : ", ") + command->get_name();
  return names;
}

// The first argument that is not a global flag: the command the user meant.
std::string first_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (argv[i][0] != '-' || argv[i][1] == '\0') return argv[i];
  return {};
}

bool is_command(const CLI::App& app, const std::string& word) {
  for (const auto* command : app.get_subcommands([](const CLI::App*) { return true; }))
    if (command->check_name(word)) return true;
  return false;
}

const CLI::App* chosen_command(const CLI::App& app) {
  for (const auto* command : app.get_subcommands([](const CLI::App*) { return true; }))
    if (command->parsed()) return command;
  return nullptr;
}

// CLI11's parse errors as one line that names the option and what it accepts.
std::string usage_message(const CLI::ParseError& e, const CLI::App& app, int argc, char** argv) {
  std::string message = e.what();
  const CLI::App* command = chosen_command(app);
  if (command == nullptr) {
    const std::string word = first_word(argc, argv);
    if (word.empty() && dynamic_cast<const CLI::RequiredError*>(&e) != nullptr)
      return "no command given (commands: " + command_list(app) + ")";
    if (!word.empty() && !is_command(app, word))
      return "unknown command '" + word + "' (commands: " + command_list(app) + ")";
  }
  const std::string where = command != nullptr ? command->get_name() : std::string("hyperbatch");
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    const auto colon = message.find(": ");
    const std::string extras = colon == std::string::npos ? message : message.substr(colon + 2);
    message = where + ": unexpected argument " + extras + " (see hyperbatch " +
              (command != nullptr ? where + " " : "") + "--help)";
  } else if (command != nullptr) {
    message = where + ": " + message;
  }
  for (char& c : message)
    if (c == '\n') c = ' ';
  return message;
}

// Commands that may run on the GPU: all but those given --backend cpu.
bool may_use_device(const CLI::App& command) {
  static const std::set<std::string> device_commands{"mnf", "pca", "knn", "sam", "run"};
  if (device_commands.count(command.get_name()) == 0) return false;
  const CLI::Option* backend = command.get_option_no_throw("--backend");
  return backend == nullptr || backend->empty() || backend->as<std::string>() != "cpu";
}

bool is_help_or_version(const CLI::ParseError& e) {
  return dynamic_cast<const CLI::CallForHelp*>(&e) != nullptr ||
         dynamic_cast<const CLI::CallForAllHelp*>(&e) != nullptr ||
         dynamic_cast<const CLI::CallForVersion*>(&e) != nullptr;
}

// Several ranks parse the same command line: only rank 0 speaks.
int report_parse_error(const CLI::ParseError& e, CLI::App& app, int argc, char** argv, bool speaks) {
  if (is_help_or_version(e)) return speaks ? app.exit(e) : hb::cli::kExitSuccess;
  if (speaks) fmt::print(stderr, "hyperbatch: error: {}\n", usage_message(e, app, argc, argv));
  hb::cli::exiting_with(hb::cli::kExitUsage);
  return hb::cli::kExitUsage;
}

}  // namespace

namespace {

// HDF5 ends itself when MPI ends and crashes on a file whose close failed (a full
// disk): such a run exits here, its error already printed, without ending MPI.
[[noreturn]] void exit_without_ending_hdf5(int code) {
  std::fflush(nullptr);
  std::_Exit(code);
}

// Runs `command` on the ranks it uses: a one-rank command runs on rank 0 alone (every
// rank writing the same files would race on their names) and the others take its outcome.
hb::Status run_on_its_ranks(const hb::cli::Registered& command, const hb::mpi::Comm& world) {
  if (command.ranks == hb::cli::Ranks::every || !world.is_parallel()) return command.action();
  return hb::mpi::outcome_of_root(world.is_root() ? command.action() : hb::Status{}, world);
}

void log_done() {
  spdlog::debug("hyperbatch done {:.2f} s after the process started", hb::cli::seconds_since_process_start());
}

// A command that succeeded has committed and closed its outputs: the process leaves
// without destroying its CUDA context, streams and pinned memory one by one, which the
// driver does with the process (a KNN command at d = 224, k = 1024 spent 0.16-0.18 s on
// it after its last line, and ends 0.18-0.21 s sooner: docs/PERFORMANCE.md).
// The CUDA warm-up is joined and MPI ended first, as at the end of main (the launcher
// waits for every rank's MPI_Finalize, and HDF5 closes itself with MPI).
[[noreturn]] void leave_after_success(std::jthread& device_warm_up) {
  log_done();
  if (device_warm_up.joinable()) device_warm_up.join();
  hb::mpi::finish();
  spdlog::default_logger()->flush();
  std::fflush(nullptr);
  std::_Exit(hb::cli::kExitSuccess);
}

}  // namespace

int main(int argc, char** argv) {
  hb::cli::stop_cleanly_on_signals();
  // MPI starts here only under a launcher; a process of its own is one rank without MPI.
  hb::mpi::Runtime mpi_runtime(&argc, &argv);
  std::jthread device_warm_up;  // started once the command is known; joined before MPI ends
  // cuInit reads the environment that MPI_Init writes: a late start waits for the warm-up.
  hb::mpi::before_start_on_demand([&device_warm_up] {
    if (device_warm_up.joinable()) device_warm_up.join();
  });
  const struct ForgetHook {
    ~ForgetHook() { hb::mpi::before_start_on_demand({}); }
  } forget_hook;  // gone before the thread it joins
  const auto world = hb::mpi::Comm::world();

  CLI::App app{"hyperbatch: reduce and classify hyperspectral scenes at archive scale", "hyperbatch"};
  app.set_version_flag("--version", std::string("hyperbatch ") + HB_VERSION);
  app.require_subcommand(1);
  bool verbose = false;
  bool quiet = false;
  app.add_flag("-v,--verbose", verbose, "More detail in the log")->configurable(false);
  app.add_flag("-q,--quiet", quiet, "Only warnings and errors");

  std::vector<hb::cli::Registered> commands = hb::cli::register_commands(app);
  // Global flags are accepted after the subcommand too.
  for (auto& command : commands) command.app->fallthrough();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return report_parse_error(e, app, argc, argv, world.is_root());
  }
  // The CUDA context starts on a thread while the command opens its inputs; a command
  // that cannot use the GPU does not wait for it at exit.
  if (const CLI::App* command = chosen_command(app); command != nullptr && may_use_device(*command))
    device_warm_up = hb::warm_up_device(world.size());

  using hb::cli::Verbosity;
  hb::cli::configure_logging(quiet ? Verbosity::quiet : verbose ? Verbosity::verbose : Verbosity::normal,
                             world.rank(), world.size());
  spdlog::debug("hyperbatch {} up {:.2f} s after the process started (exec, libraries, MPI start-up)", HB_VERSION,
                hb::cli::seconds_since_process_start());
  if (hb::mpi::running())
    spdlog::debug("MPI started: rank {} of {}", world.rank(), world.size());
  else
    spdlog::debug("MPI not started: one process without a launcher (mpirun, srun)");
  // The last line before MPI and CUDA shut down: what a timed run takes after it is exit.
  struct LogEnd {
    ~LogEnd() { log_done(); }
  } const log_end;

  for (auto& command : commands) {
    if (!command.app->parsed()) continue;
    hb::Status status;
    try {
      status = run_on_its_ranks(command, world);
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
    if (status.ok()) leave_after_success(device_warm_up);
    // Usage errors are the same on every rank and a one-rank command's is rank 0's: rank 0 says it.
    const bool said_by_root =
        status.error().kind == hb::ErrorKind::usage || command.ranks == hb::cli::Ranks::one;
    if (said_by_root && !world.is_root()) {
      hb::cli::exiting_with(status.error().exit_code());
      return status.error().exit_code();
    }
    if (world.is_parallel() && !said_by_root)
      fmt::print(stderr, "hyperbatch: error on rank {} ({}): {}\n", world.rank(), hb::mpi::host_name(),
                 status.error().line());
    else
      fmt::print(stderr, "hyperbatch: error: {}\n", status.error().line());
    hb::cli::exiting_with(status.error().exit_code());
    if (hb::io::h5::a_file_close_failed()) exit_without_ending_hdf5(status.error().exit_code());
    return status.error().exit_code();
  }
  return hb::cli::kExitUsage;
}
