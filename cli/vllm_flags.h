// vLLM's own flags, shared by `plan` and `check`, spelled as vLLM spells them.
#ifndef VRAMFIT_CLI_VLLM_FLAGS_H_
#define VRAMFIT_CLI_VLLM_FLAGS_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "vramfit/status.h"
#include "vramfit/vllm.h"

namespace vramfit::cli {

struct VllmFlags {
  std::string max_model_len;         // number or "auto"
  std::string limit_mm_per_prompt;   // '{"image": 2, "video": 0}' or image=2,video=0
  std::string mm_processor_kwargs;   // '{"max_pixels": 1003520}'
  std::string kv_cache_memory;       // bytes or 24GiB
  VllmSettings settings;
};

// Registers vLLM's flags on `app`, writing into `flags`.
void AddVllmFlags(CLI::App* app, VllmFlags* flags);

// Resolves the string-valued flags into flags->settings; kInvalidArgument names the flag.
Status FinishVllmFlags(VllmFlags* flags);

// `--engine vllm` or `vllm@X.Y` into flags->settings.version, then FinishVllmFlags.
// kUnsupported for another engine.
Status FinishEngineAndVllmFlags(const std::string& engine, VllmFlags* flags);

// A token count as vLLM parses it: 32768, 25.6k (decimal), 16K (binary). Names `flag` in errors.
Result<int64_t> ParseHumanInt(const std::string& flag, const std::string& text);

// vLLM accepts -tp/-pp/-dp; CLI11 reads "-tp" as "-t -p". Rewrites them to long forms.
std::vector<std::string> RewriteShortVllmFlags(std::vector<std::string> args);

}  // namespace vramfit::cli

#endif  // VRAMFIT_CLI_VLLM_FLAGS_H_
