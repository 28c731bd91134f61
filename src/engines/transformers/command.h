// transformers' flags, named like the Python arguments they stand for (--device-map for
// device_map=, --cache-implementation for cache_implementation=), their reader, the
// `transformers MODEL [flags]` command line `vramfit check` reads, and the one-line Python
// snippet (from_pretrained and generate arguments) a plan prints as its command.
#ifndef VRAMFIT_ENGINES_TRANSFORMERS_COMMAND_H_
#define VRAMFIT_ENGINES_TRANSFORMERS_COMMAND_H_

#include <string>
#include <vector>

#include "engines/transformers/rules.h"
#include "engines/transformers/transformers.h"
#include "vramfit/engine.h"

namespace vramfit::transformers {

// The flags, in help order.
const std::vector<FlagSpec>& Flags();

// Applies `given` on top of `base`; kInvalidArgument names the flag and what was expected.
Result<TransformersSettings> ReadFlags(const FlagValues& given, TransformersSettings base);

// `transformers MODEL [flags] [# comment]`: argv[0] is "transformers"; reading stops at an
// argument that starts with '#' (the plan's command carries its Python snippet there).
bool IsTransformersCommand(const std::vector<std::string>& argv);
Result<EngineCommand> ReadTransformersCommand(const std::vector<std::string>& argv);

// Whether `flag` is one of from_pretrained's keywords that change no GPU memory, as a flag
// (--trust-remote-code, --cache-dir DIR, ...), and whether it takes a value.
bool HasNoMemoryEffect(std::string_view flag, bool* takes_value);

// The `transformers MODEL [flags]` line `vramfit check -- ...` reads back to the same plan.
std::string CommandLine(const Inventory& inv, const TransformersSettings& s);

// One line of Python that loads and generates with `s` (statements joined by "; ").
std::string PythonSnippet(const Inventory& inv, const TransformersSettings& s, const Rules& rules);

}  // namespace vramfit::transformers

#endif  // VRAMFIT_ENGINES_TRANSFORMERS_COMMAND_H_
