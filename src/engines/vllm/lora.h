// vLLM's LoRA slots (--enable-lora): the stacked adapter buffers every LoRA-wrapped module holds
// on each GPU, sized for --max-loras adapters of --max-lora-rank, and what they add to the
// profile run. vLLM makes them while it loads the model (v1/worker/gpu_model_runner.py
// load_model: load_lora_model runs inside the DeviceMemoryProfiler whose figure is "Model
// loading took X GiB"), so they count at load and against the KV budget like the weights.
#ifndef VRAMFIT_ENGINES_VLLM_LORA_H_
#define VRAMFIT_ENGINES_VLLM_LORA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engines/vllm/rules.h"
#include "vramfit/model.h"

namespace vramfit::vllm {

struct LoraOptions {
  int64_t max_loras = 1;         // --max-loras: adapter slots on the GPU
  int64_t max_lora_rank = 16;    // --max-lora-rank
  int64_t tensor_parallel_size = 1;
  bool fully_sharded = false;    // --fully-sharded-loras
  uint64_t dtype_bytes = 2;      // --lora-dtype (auto: the model's dtype)
  uint64_t batched_tokens = 0;   // the profile run's tokens (max_num_batched_tokens)
  // --lora-target-modules: the module suffixes that get slots (empty: every supported one).
  std::vector<std::string> target_modules;
};

struct LoraSlots {
  uint64_t decoder = 0;          // qkv_proj, o_proj, gate_up_proj, down_proj of every layer
  uint64_t embeddings = 0;       // embed_tokens and lm_head, where the release wraps them
  uint64_t total() const { return decoder + embeddings; }
  // The profile run's shrink buffer beside the widest wrapped projection (fp32).
  uint64_t profile_bytes = 0;
  std::string formula;                 // the per-layer terms, for --explain
  std::vector<std::string> not_modelled;  // layers or modules whose buffers are not counted
};

// The LoRA buffers of one rank for `spec` (the planned stage's layers) under `rules`:
// vllm/lora/layers/base_linear.py BaseLinearLayerWithLoRA.create_lora_weights and
// column_parallel_linear.py MergedColumnParallelLinearWithLoRA (per slice: lora_a
// max_loras x rank_a x input_size, lora_b max_loras x output_slice x rank), with the input and
// output sizes of the base layer's TP shard; vocab_parallel_embedding.py and
// logits_processor.py for the embedding and the LM head. Formulas in docs/engines/vllm.md
// ("LoRA slots").
LoraSlots LoraSlotBytes(const ModelSpec& spec, const LoraOptions& o, const Rules& rules);

// Whether vLLM wraps the embedding and the LM head of `architecture` with LoRA layers at the
// rules' release: the model class declares `embedding_modules` (lora/utils.py
// get_supported_lora_modules adds them). LlamaForCausalLM and MistralForCausalLM declare them in
// every modelled release; Qwen3ForCausalLM from PR #29816 (merged 2026-02-06, v0.16).
bool LoraWrapsEmbeddings(const std::string& architecture, const Rules& rules);

}  // namespace vramfit::vllm

#endif  // VRAMFIT_ENGINES_VLLM_LORA_H_
