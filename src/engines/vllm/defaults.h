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

// The --hf-overrides JSON of the static YaRN that Qwen's model cards document from 32,768
// tokens ("Processing Long Texts": rope_type yarn, original_max_position_embeddings 32768, a
// factor up to 4), with the smallest whole factor that derives `requested`; for the Qwen2,
// Qwen2-MoE, Qwen3 and Qwen3-MoE families with no rope_scaling of their own. Empty otherwise.
std::string QwenYarnOverride(const ModelSpec& spec, int64_t requested);

// The ways out of MaxLenError, as one line of advice: the derived length itself, Qwen's YaRN
// (QwenYarnOverride) where it applies, VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 last.
std::string MaxLenWayOut(const ModelSpec& spec, int64_t requested, int64_t derived,
                         bool window_capped);

// The attention heads vLLM divides among TP ranks (hf_text_config.num_attention_heads): those
// of the first full, sliding-window or MLA layer; 0 for a model with none.
int64_t AttentionHeads(const ModelSpec& spec);

// The TP sizes nearest `tp` that vLLM accepts for this model's attention: powers of two that
// divide the heads and either divide the KV heads or are a multiple of them (QKVParallelLinear
// replicates KV heads only that way). `below` is at least 1; `above` 0 where none up to 64.
struct TpChoices {
  int64_t below = 1, above = 0;
};
TpChoices HeadsTpChoices(const ModelSpec& spec, int64_t tp);

// The ways out of heads % TP != 0 (HeadsTpChoices), the smaller size with pipeline stages on
// the same GPUs (TP x PP unchanged) where it divides TP.
std::string HeadsWayOut(const ModelSpec& spec, int64_t tp, int64_t pp);

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
