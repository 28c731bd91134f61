// vLLM's defaults, in one place: the context it derives from config.json, its error for a
// longer one, and the scheduler defaults by GPU (EngineArgs.get_batch_defaults). The planner,
// the flag reader and the fit knobs all read them from here.
#ifndef VRAMFIT_ENGINES_VLLM_DEFAULTS_H_
#define VRAMFIT_ENGINES_VLLM_DEFAULTS_H_

#include <cstdint>
#include <string>

#include "engines/vllm/rules.h"
#include "engines/vllm/vllm.h"
#include "vramfit/gpu.h"
#include "vramfit/model.h"

namespace vramfit::vllm {

// The context vLLM uses when config.json names none (max_position_embeddings absent).
inline constexpr int64_t kFallbackMaxModelLen = 4096;

// max_model_len derived from the config (_get_and_verify_max_len): max_position_embeddings,
// else kFallbackMaxModelLen.
int64_t DerivedMaxModelLen(const ModelSpec& spec);

// vLLM's error for --max-model-len beyond the derived maximum without
// VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (vllm/config/model.py _get_and_verify_max_len).
// `key` is the config key the derived length came from ("max_position_embeddings", or
// "sliding_window" under --disable-sliding-window).
std::string MaxLenError(int64_t requested, int64_t derived,
                        std::string_view key = "max_position_embeddings");

// The API server's larger scheduler defaults apply: >= 70 GiB and not an A100
// (EngineArgs.get_batch_defaults keys them on the device name), as NVML reports the total (a
// card whose NVML memory query is not supported, GB10, counts as 0 bytes).
bool LargeGpuDefaults(const GpuSpec& gpu);

// The default --max-num-batched-tokens on `gpu` before any cap: 8192 on large GPUs, else 2048.
int64_t DefaultMaxNumBatchedTokens(const GpuSpec& gpu);

// Fills max_num_seqs and max_num_batched_tokens left at 0 as vLLM does (V0: 256 sequences;
// chunked prefill only above 32K of context, otherwise the whole max_model_len is one prefill
// of max(max_model_len, 2048) tokens; V1: by GPU, capped from v0.11 at seqs x max_model_len),
// then caps max_num_seqs at max_num_batched_tokens. s->max_model_len must be resolved.
void ApplySchedulerDefaults(const Rules& rules, const GpuSpec& gpu, VllmSettings* s);

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_DEFAULTS_H_
