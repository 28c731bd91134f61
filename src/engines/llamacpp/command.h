// llama.cpp's flags as llama-server and llama-cli spell them (common/arg.cpp: -c/--ctx-size,
// -ngl/--n-gpu-layers, -ctk/--cache-type-k, ...), their reader, the `llama-server -m x.gguf
// ...` / `llama-cli ...` command lines `vramfit check` reads (with a CUDA_VISIBLE_DEVICES
// prefix), and the llama-server line a plan prints.
#ifndef VRAMFIT_ENGINES_LLAMACPP_COMMAND_H_
#define VRAMFIT_ENGINES_LLAMACPP_COMMAND_H_

#include <string>
#include <vector>

#include "engines/llamacpp/llamacpp.h"
#include "vramfit/engine.h"

namespace vramfit::llamacpp {

// The flags, in help order (vramfit plan --engine llamacpp takes them too).
const std::vector<FlagSpec>& Flags();

// Applies `given` on top of `base`; kInvalidArgument names the flag and what was expected.
Result<LlamaCppSettings> ReadFlags(const FlagValues& given, LlamaCppSettings base);

// `[ENV=V ...] llama-server|llama-cli [-m] MODEL [flags]` (also a path ending in those names).
bool IsLlamaCppCommand(const std::vector<std::string>& argv);
Result<EngineCommand> ReadLlamaCppCommand(const std::vector<std::string>& argv);

// Whether `flag` is a llama-server/llama-cli flag with no device-memory effect (--host,
// --port, -t, --jinja, --temp, ...), and whether it takes a value.
bool HasNoMemoryEffect(std::string_view flag, bool* takes_value);

// The `llama-server -m MODEL [flags]` line `vramfit check -- ...` reads back to the same plan.
std::string CommandLine(const Inventory& inv, const LlamaCppSettings& s);

}  // namespace vramfit::llamacpp

#endif  // VRAMFIT_ENGINES_LLAMACPP_COMMAND_H_
