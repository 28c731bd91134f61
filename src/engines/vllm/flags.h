// vLLM's flags as vLLM spells them: the table `plan`, `fit` and `check` register, and the reader
// that turns the values a user gave into settings. JSON-valued flags are read with simdjson;
// token counts as vLLM's human_readable_int reads them.
#ifndef VRAMFIT_ENGINES_VLLM_FLAGS_H_
#define VRAMFIT_ENGINES_VLLM_FLAGS_H_

#include <string>
#include <string_view>
#include <vector>

#include "engines/vllm/rules.h"
#include "engines/vllm/vllm.h"
#include "vramfit/engine.h"
#include "vramfit/status.h"

namespace vramfit::vllm {

// The flags, in help order.
const std::vector<FlagSpec>& Flags();

// Applies `given` (FlagSpec names with their text) on top of `base`; kInvalidArgument names the
// flag and what was expected.
Result<VllmSettings> ReadFlags(const FlagValues& given, VllmSettings base);

// Whether a --speculative-config method drafts with the target checkpoint's own MTP layers
// (vllm/config/speculative.py maps "mtp" to the model's MTP module: Qwen3-Next/3.5, DeepSeek),
// so no separate draft model is loaded.
bool SpeculativeUsesOwnLayers(std::string_view method);

// --kv-cache-dtype `value` against the choices of the rules' release (Rules::kv_cache_dtype_flag
// and the kv_fp8 fields): argparse's own refusal for a flag or a choice the release has not.
// `version` is the release as the user gave it ("0.4.2"), named in the message ("": the
// rules' release line).
Status CheckKvCacheDtypeChoice(const Rules& rules, const std::string& value,
                               const std::string& version = "");

// A token count as vLLM parses it: 32768, 25.6k (decimal), 16K (binary). Names `flag` in errors.
Result<int64_t> ParseHumanInt(const std::string& flag, const std::string& text);

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_FLAGS_H_
