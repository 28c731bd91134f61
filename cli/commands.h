// The subcommand table of the vramfit command: each command registers its flags on a
// CLI11 subcommand and runs after parsing. Commands print data to stdout, diagnostics to
// stderr, and return the process exit code (0 ok, 1 check predicts failure, 2 bad input).
#ifndef VRAMFIT_CLI_COMMANDS_H_
#define VRAMFIT_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>
#include <functional>

namespace vramfit::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 2;

struct Command {
  const char* name;
  const char* summary;
  // Adds the subcommand's flags; returns the function to run once parsing succeeded.
  std::function<std::function<int()>(CLI::App*)> setup;
};

std::function<int()> SetupInspect(CLI::App* app);
std::function<int()> SetupModels(CLI::App* app);
std::function<int()> SetupGpus(CLI::App* app);

}  // namespace vramfit::cli

#endif  // VRAMFIT_CLI_COMMANDS_H_
