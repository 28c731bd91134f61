// SGLang's flags as SGLang spells them (python/sglang/srt/server_args.py add_cli_args, v0.5.5):
// the table `plan`, `fit` and `check` register, and the reader that turns the values a user gave
// into settings. JSON-valued flags are read with simdjson.
#ifndef VRAMFIT_ENGINES_SGLANG_FLAGS_H_
#define VRAMFIT_ENGINES_SGLANG_FLAGS_H_

#include <string>
#include <vector>

#include "engines/sglang/sglang.h"
#include "vramfit/engine.h"

namespace vramfit::sglang {

// The flags, in help order. Aliases SGLang accepts (--tensor-parallel-size for --tp-size, ...)
// are rows of their own.
const std::vector<FlagSpec>& Flags();

// The table's name for `name` as SGLang's argparse reads it ("--tp" -> "--tp-size"); "" when
// SGLang has no such flag in the table.
std::string CanonicalFlag(const std::string& name);

// For a vLLM flag whose setting SGLang has under another name (server_args.py, v0.5.5),
// " (SGLang spells the nearest setting --context-length)"; "" for any other name.
std::string SglangSpelling(const std::string& vllm_flag);

// Applies `given` (FlagSpec names with their text) on top of `base`; kInvalidArgument names the
// flag and what was expected.
Result<SglangSettings> ReadFlags(const FlagValues& given, SglangSettings base);

}  // namespace vramfit::sglang

#endif  // VRAMFIT_ENGINES_SGLANG_FLAGS_H_
