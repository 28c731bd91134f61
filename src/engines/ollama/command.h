// Ollama's settings as its users write them: environment variables of `ollama serve`
// (OLLAMA_CONTEXT_LENGTH, OLLAMA_NUM_PARALLEL, OLLAMA_KV_CACHE_TYPE, OLLAMA_FLASH_ATTENTION,
// OLLAMA_GPU_OVERHEAD, OLLAMA_SCHED_SPREAD, CUDA_VISIBLE_DEVICES) and Modelfile parameters
// (num_ctx, num_gpu, num_batch); vramfit's flags named after them (--num-ctx, --num-gpu, ...);
// the `[ENV=V ...] ollama run MODEL` lines `vramfit check` reads; the line a plan prints.
#ifndef VRAMFIT_ENGINES_OLLAMA_COMMAND_H_
#define VRAMFIT_ENGINES_OLLAMA_COMMAND_H_

#include <string>
#include <vector>

#include "engines/ollama/ollama.h"
#include "vramfit/engine.h"

namespace vramfit::ollama {

// The flags, in help order (vramfit plan --engine ollama takes them).
const std::vector<FlagSpec>& Flags();

// Applies `given` on top of `base`; kInvalidArgument names the flag and what was expected.
Result<OllamaSettings> ReadFlags(const FlagValues& given, OllamaSettings base);

// `[env] [NAME=V ...] ollama run MODEL [...]`, or `ollama MODEL [vramfit's Ollama flags]` (what
// `check --engine ollama MODEL` writes).
bool IsOllamaCommand(const std::vector<std::string>& argv);
Result<EngineCommand> ReadOllamaCommand(const std::vector<std::string>& argv);

// Whether `flag` is one of `ollama run`'s own flags, none of which changes what a load holds
// (--verbose, --keepalive 5m, --format json, ...), and whether it takes a value.
bool HasNoMemoryEffect(std::string_view flag, bool* takes_value);

// `ENV=V ... ollama run MODEL`: the environment that gives the plan's settings (num_ctx as
// OLLAMA_CONTEXT_LENGTH, the default context of every request); num_gpu and num_batch, which
// have no variable, are Modelfile lines in the plan's notes.
std::string CommandLine(const Inventory& inv, const OllamaSettings& s);

}  // namespace vramfit::ollama

#endif  // VRAMFIT_ENGINES_OLLAMA_COMMAND_H_
