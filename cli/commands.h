// The subcommand table of the vramfit command: each command registers its flags on a
// CLI11 subcommand and runs after parsing. Commands print data to stdout, diagnostics to
// stderr, and return the process exit code (0 ok, 1 check predicts failure, 2 bad input).
#ifndef VRAMFIT_CLI_COMMANDS_H_
#define VRAMFIT_CLI_COMMANDS_H_

#include <CLI/CLI.hpp>
#include <cstdio>
#include <functional>
#include <istream>
#include <string_view>
#include <string>
#include <vector>

#include "vramfit/advice.h"
#include "vramfit/engine.h"
#include "vramfit/gpu.h"
#include "vramfit/inspect.h"
#include "vramfit/status.h"

namespace vramfit::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFails = 1;
inline constexpr int kExitUsage = 2;

// Parses the arguments (without the program name) and runs the subcommand they name; returns
// the exit code. Each call stands alone: the `check` command after "--" is reset.
int Run(std::vector<std::string> args);

// Where the commands print and read: stdout, stderr and stdin, or, inside RunCaptured, this
// thread's buffers (the local web page runs commands this way, one per request thread).
FILE* Out();
FILE* Err();
std::istream& In();
struct Captured {
  int exit_code = 0;
  std::string out, err;
};
// Run with stdout and stderr captured and `input` as stdin (`doctor -`). Not for `check` or
// `monitor`, whose "--" command is process-wide.
Captured RunCaptured(std::vector<std::string> args, std::string_view input = {});

struct Command {
  const char* name;
  std::string summary;
  // Adds the subcommand's flags; returns the function to run once parsing succeeded.
  std::function<std::function<int()>(CLI::App*)> setup;
};

std::function<int()> SetupInspect(CLI::App* app);
std::function<int()> SetupModels(CLI::App* app);
std::function<int()> SetupGpus(CLI::App* app);
std::function<int()> SetupPlan(CLI::App* app);
std::function<int()> SetupCheck(CLI::App* app);
std::function<int()> SetupFit(CLI::App* app);
std::function<int()> SetupDoctor(CLI::App* app);
std::function<int()> SetupServe(CLI::App* app);
std::function<int()> SetupKv(CLI::App* app);
// How every command reads MODEL: Hub ids with the environment's settings (HF_TOKEN, HF_ENDPOINT,
// HF_HOME, HF_HUB_OFFLINE) and a progress line on stderr when a fetch takes over a second.
InspectOptions ModelOptions();
// --as-quantized METHOD [--bits N] [--group-size G] [--desc-act] (cli/what_if_flags.cc): a
// what-if quantization for plan, fit and inspect, checked and put into the InspectOptions.
struct WhatIfFlags {
  std::string method;
  int bits = 0;
  int64_t group_size = -2;
  bool desc_act = false;
};
void AddWhatIfFlags(CLI::App* app, WhatIfFlags* f);
Status ApplyWhatIfFlags(const WhatIfFlags& f, InspectOptions* options);
// The engine command line given to `check` after "--".
void SetCheckCommand(std::vector<std::string> command);
std::function<int()> SetupMonitor(CLI::App* app);
// The command given to `monitor` after "--".
void SetMonitorCommand(std::vector<std::string> command);

// A memory size flag (--gpu-memory, --other-memory): a number with a unit as ParseMemorySize
// reads it; a bare number is GiB (a GPU has no 16-byte memory), and stderr says so.
Result<uint64_t> ReadMemoryFlag(const char* flag, const std::string& text);

// The first of `words` that is a flag written with a typographic dash (`—enforce-eager`: an
// em dash, en dash or minus sign where a word processor or chat app rewrote `--`), as a
// sentence saying how to type it; "" when there is none.
std::string TypographicDashFlag(const std::vector<std::string>& words);

// "--gpu 2x rtx3090": a --gpu value that is a count ("2x"), the card then a stray word. The
// count ("2"), or "" when `value` is no such count.
std::string GpuCountWord(const std::string& value);

// Advice from the catalog's other weight formats of `inv` (when it is a catalog model), for a
// plan that fails at load or at the KV cache.
std::vector<Advice> VariantAdvice(const Engine& engine, const Inventory& inv, const GpuSpec& gpu,
                                  const EngineSettings& settings, const Plan& plan);

// --gpu NAME and/or --gpu-memory SIZE: a catalog card, the card with the user's memory figure,
// or a custom GPU of that size.
Result<GpuSpec> ResolveGpu(const std::string& name, const std::string& memory);

// `plan` and `check`: --gpu A,B,... and --gpu-memory X,Y,... (comma-separated, one entry per
// pipeline stage or per rank; one entry stands for all): the cards, at least one.
Result<std::vector<GpuSpec>> ResolveGpus(const std::string& names, const std::string& memories);

// A MODEL such as "someorg/Qwen3-8B" (or a path that is not here) that matched a catalog entry
// by its last part only: a note on stderr saying which model was read.
void NoteCatalogByName(std::string_view model);
// On stderr, for a model whose architecture is not in the architecture table: that the plan
// reads it as a generic decoder, and what its config says the generic reading gets wrong.
void NoteGenericReading(const Inventory& inv);


// After a text report: a note for each catalog entry named in `text` as a command's model
// whose repo is only described ("(community AWQ of Qwen/Qwen3.6-35B-A3B)"): the printed
// command needs a real checkpoint in its place.
void NotePlaceholderModels(const std::string& text);
// Puts several cards into `settings` (EngineSettings::stage_gpus) for an engine that plans them;
// kInvalidArgument for one that does not. One card: nothing to do.
Status ApplyStageGpus(const Engine& engine, const std::vector<GpuSpec>& gpus,
                      EngineSettings* settings);
inline constexpr const char* kGpuListHelp =
    "GPU name or alias (see `vramfit gpus`); mixed cards: one per pipeline stage (or rank), "
    "comma-separated, e.g. 5070ti,5090d";

// Writes a command's HTML report to `path` (--html FILE) and names it on stderr.
Status WriteHtmlFile(const std::string& path, const std::string& html);

// Prints a failed Status to stderr and returns kExitUsage from the enclosing runner.
#define VRAMFIT_CLI_CHECK(expr)                                             \
  do {                                                                     \
    ::vramfit::Status vramfit_cli_s_ = (expr);                             \
    if (!vramfit_cli_s_.ok()) {                                            \
      std::fprintf(stderr, "vramfit: %s\n", vramfit_cli_s_.message().c_str()); \
      return ::vramfit::cli::kExitUsage;                                   \
    }                                                                      \
  } while (0)

}  // namespace vramfit::cli

#endif  // VRAMFIT_CLI_COMMANDS_H_
