#include "src/cli/commands.hpp"

namespace hb::cli {

std::vector<Registered> register_commands(CLI::App& root) {
#define HB_CLI_REGISTER_COMMAND(name) register_##name(root),
  return {HB_CLI_COMMANDS(HB_CLI_REGISTER_COMMAND)};
#undef HB_CLI_REGISTER_COMMAND
}

}  // namespace hb::cli
