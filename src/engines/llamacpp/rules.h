// llama.cpp's rules for one build, resolved once from the build number: every behaviour that
// changed between builds is a named field here, so no other file compares build numbers.
// docs/engines/llamacpp.md lists them with the change that brought each.
#ifndef VRAMFIT_ENGINES_LLAMACPP_RULES_H_
#define VRAMFIT_ENGINES_LLAMACPP_RULES_H_

#include <cstdint>
#include <string>

#include "vramfit/status.h"

namespace vramfit::llamacpp {

// The build whose source the plan follows: ec98e2002 (2025-12, b7437 as llama.cpp issue 18097
// reports it), vendored by Ollama v0.24.0.
inline constexpr int kModelledBuild = 7437;

struct Rules {
  int build = kModelledBuild;
  // n_ctx is padded to 256 whatever the attention (llama-context.cpp, PR 17046); before, to
  // the KV cache's padding: 256 with flash attention, 32 without.
  bool pad_256_always = true;
  // Sliding-window layers keep only their window (llama-kv-cache-iswa.cpp, PR 13194, with
  // --swa-full to opt out); before, every layer held n_ctx cells.
  bool swa_window_cache = true;
  // --kv-unified / separate streams per sequence (PR 14363); before, one buffer for all.
  bool kv_streams = true;
  // llama-server's --parallel default: 4 slots over a unified cache (tools/server, PR 16736);
  // before, one slot.
  bool server_four_slots = true;
  // DeepSeek MLA caches the latent (K = kv_lora_rank + rope, V = kv_lora_rank, one head;
  // PR 12801); before, full K and V per head.
  bool mla_latent_cache = true;
  // -ngl N offloads the output layer first and N - 1 repeating layers (start n_layer + 1 - N);
  // before, N repeating layers and the output layer only when N > n_layer
  // (llama-model.cpp load_tensors at ec98e2002: start = n_layer - N). Seen in logs of 2026
  // (validation r35, r42); the build is an estimate from their dates, not read in the source.
  bool ngl_output_first = false;
  // --fit on by default: before loading, llama_params_fit (src/llama.cpp) shrinks an unset
  // context and then moves experts or layers off the GPUs to leave --fit-target free per
  // device (PR 16653, merged 2025-12-15; ec98e2002, b7437, has it: issue 18097). Before, the
  // flag did not exist and every setting was taken as given.
  bool fit_default_on = true;
  // -fa / --flash-attn takes on|off|auto and defaults to auto (flash_attn_type, common/arg.cpp);
  // before, -fa was a switch (bare: on) and flash attention was off unless given. Bindings
  // that synced to b6327 on 2025-08-31 already carry flash_attn_type (mybigday/llama.node
  // PR 102) and those of b6343 read it as a string (WasmEdge PR 4343); b6194's -fa is bare
  // (llama.cpp discussion 15396 runs `-ngl 99 -fa` there). The build is an estimate.
  bool fa_takes_value = true;
};

// The first build whose -fa takes on|off|auto (an estimate, above).
inline constexpr int kFaValueBuild = 6325;

// The first build with --fit (an estimate from PR 16653's merge date, like the others).
inline constexpr int kFitBuild = 7410;

// "b7437", "7437", "" (the modelled build) -> its rules; kInvalidArgument for other text.
Result<Rules> RulesFor(const std::string& version);

}  // namespace vramfit::llamacpp

#endif  // VRAMFIT_ENGINES_LLAMACPP_RULES_H_
