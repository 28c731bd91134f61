// vLLM's command lines, both ways: the `vllm serve` command of a plan's settings, and the reader
// of a user's real one (`vllm serve MODEL ...`, `python -m vllm.entrypoints.openai.api_server
// --model MODEL ...`, environment prefixes, `--flag=value`, -tp/-pp/-dp).
#ifndef VRAMFIT_ENGINES_VLLM_COMMAND_H_
#define VRAMFIT_ENGINES_VLLM_COMMAND_H_

#include <string>
#include <vector>

#include "engines/vllm/vllm.h"
#include "vramfit/engine.h"
#include "vramfit/status.h"

namespace vramfit::vllm {

// The `vllm serve` command line of resolved settings `s`; flags the user left at vLLM's
// defaults (`in`) are written only where the plan depends on them.
std::string ServeCommand(const std::string& model, const VllmSettings& s, const VllmSettings& in,
                         const std::string& revision = "");

// Whether argv (environment prefixes allowed) starts a vLLM server.
bool IsServeCommand(const std::vector<std::string>& argv);

// Reads a vLLM command line. kInvalidArgument for one that is not a vLLM server, that names no
// model, or whose flags do not parse. The environment prefix sets VLLM_USE_V1=0 (the V0
// engine) and VLLM_ALLOW_LONG_MAX_MODEL_LEN=1; other variables except CUDA_VISIBLE_DEVICES are
// listed as not modelled, and so are flags that are neither read nor free of memory effect.
Result<EngineCommand> ReadServeCommand(const std::vector<std::string>& argv);

// Whether `flag` is a `vllm serve` flag with no memory effect (--host, --port, ...), and
// whether it takes a value (Engine::no_memory_effect).
bool HasNoMemoryEffect(std::string_view flag, bool* takes_value);

// Rewrites vLLM's one-dash multi-letter flags (-tp, -pp, -dp) to their long forms.
std::vector<std::string> RewriteShortFlags(std::vector<std::string> args);

// --rope-scaling's JSON as the --hf-overrides object vLLM makes of it: {"rope_scaling": JSON}.
// Example: RopeScalingOverride("{\"factor\": 4.0}") == "{\"rope_scaling\": {\"factor\": 4.0}}".
std::string RopeScalingOverride(const std::string& json);

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_COMMAND_H_
