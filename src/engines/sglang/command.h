// SGLang's command lines, both ways: the `python -m sglang.launch_server` command of a plan's
// settings, and the reader of a user's real one (`python -m sglang.launch_server --model-path M
// ...`, `sglang serve --model-path M ...`, environment prefixes, `--flag=value`, JSON values).
#ifndef VRAMFIT_ENGINES_SGLANG_COMMAND_H_
#define VRAMFIT_ENGINES_SGLANG_COMMAND_H_

#include <string>
#include <vector>

#include "engines/sglang/sglang.h"
#include "vramfit/engine.h"

namespace vramfit::sglang {

// The launch command of resolved settings `s`; flags the user left at SGLang's defaults (`in`)
// are written only where the plan depends on them. `revision`: the Hub revision the model was
// read at ("" for the default branch), as --revision unless the user's own is kept.
std::string LaunchCommand(const std::string& model, const SglangSettings& s,
                          const SglangSettings& in, const std::string& revision = "");

// Whether argv (environment prefixes allowed) starts an SGLang server.
bool IsLaunchCommand(const std::vector<std::string>& argv);

// Reads an SGLang command line as SGLang's argparse reads it, over the option lists of
// server_flags.h. kInvalidArgument for one that is not an SGLang server, names no model, or that
// SGLang's parser stops on whatever the release: a flag without its value, a switch given one,
// a word that is neither a flag nor a flag's value (`sglang serve MODEL` included). The
// environment prefix sets SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1 and
// SGLANG_IMAGE_MAX_PIXELS; other variables except CUDA_VISIBLE_DEVICES are listed as not
// modelled, and so is every flag that is neither read nor free of memory effect, by name. Every
// flag written goes to given_flags, for CheckCommandFlags to refuse those the release lacks.
Result<EngineCommand> ReadLaunchCommand(const std::vector<std::string>& argv);

// Whether `flag` (or an abbreviation of one option) is an SGLang server flag with no memory
// effect (--host, --port, --log-level, ...), and whether it takes a value.
bool HasNoMemoryEffect(std::string_view flag, bool* takes_value);

}  // namespace vramfit::sglang

#endif  // VRAMFIT_ENGINES_SGLANG_COMMAND_H_
