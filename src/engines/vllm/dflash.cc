// Weights of vLLM's DFlash drafter, as vllm/model_executor/models/qwen3_dflash.py builds them
// (DFlashQwen3Model, DFlashQwen3ForCausalLM: main 036a00d1; method "dflash" is on main by
// 2026-03, present in the 0.20 nightlies, its first tag not confirmed).
// docs/engines/vllm-speculative.md §5 has the reading.
#include "engines/vllm/dflash.h"

#include <algorithm>

namespace vramfit::vllm {

DflashWeights DflashWeightsPerRank(const ModelSpec& draft, int64_t tp, int dtype_bits) {
  DflashWeights w;
  tp = std::max<int64_t>(1, tp);
  const uint64_t bytes = static_cast<uint64_t>(std::max(8, dtype_bits) / 8);
  const int64_t h = draft.hidden_size;
  for (const LayerSpec& l : draft.layers) {
    const AttentionSpec& a = l.attention;
    const int64_t d = a.head_dim > 0 ? a.head_dim : (a.num_heads > 0 ? h / a.num_heads : 0);
    // DFlashQwen3Attention: QKVParallelLinear splits the query heads by TP and keeps
    // max(1, kv_heads / tp) KV heads a rank; RowParallelLinear o_proj splits its input;
    // q_norm and k_norm are one head_dim each, whole.
    const int64_t q = a.num_heads / tp * d;
    const int64_t kv = std::max<int64_t>(1, a.num_kv_heads / tp) * d;
    int64_t n = h * (q + 2 * kv) + q * h + 2 * d;
    if (a.qkv_bias) n += q + 2 * kv;
    if (a.o_bias) n += h;
    // Qwen3MLP (qwen2.py Qwen2MLP): merged gate_up column-parallel, down row-parallel.
    n += 3 * h * (l.mlp.intermediate_size / tp);
    n += 2 * h;  // input_layernorm, post_attention_layernorm
    w.layers += static_cast<uint64_t>(n) * bytes;
  }
  // fc: a ReplicatedLinear from (target_hidden_size or hidden_size) x the number of target
  // layers read (dflash_config.target_layer_ids; the drafter's layer count without them) to
  // hidden_size, so every rank holds it whole (_get_dflash_fc_input_size).
  const int64_t taps = draft.dflash_target_layers > 0
                           ? draft.dflash_target_layers
                           : static_cast<int64_t>(draft.layers.size());
  w.fc = static_cast<uint64_t>(h * taps * h) * bytes;
  w.norms = static_cast<uint64_t>(2 * h) * bytes;  // hidden_norm, norm
  // embed_tokens and lm_head: has_own_embed_tokens / has_own_lm_head are False, so the
  // proposer takes the target's modules (llm_base_proposer.py _maybe_share_embeddings,
  // _maybe_share_lm_head); the z-lab checkpoints store neither tensor.
  return w;
}

}  // namespace vramfit::vllm
