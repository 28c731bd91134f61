// The engines' own flags on `plan` and `fit`, registered from the engine table: every flag any
// engine declares (in its own spelling), read back by the chosen engine.
#ifndef VRAMFIT_CLI_ENGINE_FLAGS_H_
#define VRAMFIT_CLI_ENGINE_FLAGS_H_

#include <CLI/CLI.hpp>
#include <deque>
#include <string>
#include <vector>

#include "vramfit/engine.h"
#include "vramfit/inventory.h"
#include "vramfit/status.h"

namespace vramfit::cli {

// The values CLI11 parsed into, one slot per registered flag.
struct EngineFlagSlots {
  std::vector<FlagSpec> specs;
  std::deque<std::string> values;
  std::deque<bool> set;
  std::vector<CLI::Option*> options;
};

// Registers every engine's flags on `app` (a name declared by two engines once).
void AddEngineFlags(CLI::App* app, EngineFlagSlots* slots);

// The engine named by `--engine NAME[@VERSION]` and the settings its flags give.
struct ChosenEngine {
  const Engine* engine = nullptr;
  EngineSettings settings;
};
// kUnsupported for an engine not in the table; kInvalidArgument for a flag the chosen engine
// does not have or a value it cannot read.
Result<ChosenEngine> ReadEngineFlags(const std::string& engine_spec, const EngineFlagSlots& slots);

// Reads the draft model `settings` names (vLLM's --speculative-config "model": a local path or
// catalog id, like MODEL) into settings->draft_inventory, so the engine plans its weights and KV
// cache. One that cannot be read is said on stderr (prefixed `command`) and left out; the plan
// then names the draft as not modelled.
void ReadDraftModel(const char* command, EngineSettings* settings);

// Reads the header of the vision projector `settings` names (llama.cpp's --mmproj FILE, a
// local path) into settings->mmproj_header, as ReadDraftModel does for a draft: one that
// cannot be read is said on stderr and left out, and the plan names it as not modelled.
void ReadMmproj(const char* command, EngineSettings* settings);

// The vision projector llama.cpp's -hf REPO:TAG fetches beside a GGUF what-if
// (Inventory::what_if_mmproj): named by --mmproj (counted) or refused by --no-mmproj
// (`refused`), it is no longer what the what-if leaves out; otherwise, where its header is
// laid out, it goes into settings->mmproj_header and is planned as --mmproj FILE is.
void TakeWhatIfMmproj(const Engine& engine, bool refused, EngineSettings* settings,
                      Inventory* inv);

// The engines' titles as people write them, joined with ", ".
std::string EngineTitles();
// The --engine help: each engine's name, alone or with @X.Y, and the default release.
std::string EngineOptionHelp();

}  // namespace vramfit::cli

#endif  // VRAMFIT_CLI_ENGINE_FLAGS_H_
