// Each subcommand registers itself on the root app and returns the action to run
// when it was chosen. Actions return a Status; main() turns a failed one into one
// line on stderr and the error's exit code.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

#include "src/base/error.hpp"

namespace hb::cli {

using Action = std::function<Status()>;

struct Registered {
  CLI::App* app;
  Action action;
};

Registered register_info(CLI::App& root);
Registered register_ingest(CLI::App& root);
Registered register_export(CLI::App& root);
Registered register_synth(CLI::App& root);
Registered register_mnf(CLI::App& root);
Registered register_pca(CLI::App& root);
Registered register_knn(CLI::App& root);
Registered register_sam(CLI::App& root);
Registered register_run(CLI::App& root);
Registered register_submit(CLI::App& root);
Registered register_ortho(CLI::App& root);

// Exit codes beyond hb::ErrorKind: 0 success, 2 usage (CLI11 parse errors too).
constexpr int kExitSuccess = 0;
constexpr int kExitUsage = 2;

}  // namespace hb::cli
