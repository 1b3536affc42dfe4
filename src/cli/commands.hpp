// Each subcommand registers itself on the root app and returns the action to run
// when it was chosen. Actions return a Status; main() turns a failed one into one
// line on stderr and the error's exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <vector>

#include "src/base/error.hpp"

namespace hb::cli {

using Action = std::function<Status()>;

// How a command uses the ranks a launcher started.
enum class Ranks {
  one,    // rank 0 runs it; the others wait for its outcome: one writer, one report
  every,  // every rank runs it and the ranks divide the work (collective I/O, reductions)
};

struct Registered {
  CLI::App* app;
  Action action;
  Ranks ranks = Ranks::one;
};

// Every subcommand, in the order `--help` lists them. A new command is its file (which
// defines register_NAME) and its name here: the one registration line.
#define HB_CLI_COMMANDS(X) \
  X(info) X(ingest) X(export) X(synth) X(mnf) X(pca) X(knn) X(sam) X(ortho) X(run) X(submit)

#define HB_CLI_DECLARE_COMMAND(name) Registered register_##name(CLI::App& root);
HB_CLI_COMMANDS(HB_CLI_DECLARE_COMMAND)
#undef HB_CLI_DECLARE_COMMAND

// Registers every command of HB_CLI_COMMANDS on `root`.
std::vector<Registered> register_commands(CLI::App& root);

// Exit codes beyond hb::ErrorKind: 0 success, 2 usage (CLI11 parse errors too).
constexpr int kExitSuccess = 0;
constexpr int kExitUsage = 2;

}  // namespace hb::cli
