// The engine-neutral cache formulas of one decoder layer: K/V bytes per token for full and
// sliding attention, the MLA latent per token, and the fixed per-sequence state of a
// linear-attention (gated delta net) layer. Every engine's KV layout builds on these; how an
// engine pages, pads and groups them is the engine's own (src/engines/<engine>/).
#ifndef VRAMFIT_MODEL_KV_STATE_H_
#define VRAMFIT_MODEL_KV_STATE_H_

#include <cstdint>

#include "vramfit/model.h"
#include "vramfit/status.h"

namespace vramfit {

// KV heads one tensor-parallel rank holds: num_kv_heads / tp, at least one (heads are
// replicated when tp exceeds them; vLLM ModelConfig.get_num_kv_heads, SGLang likewise).
uint64_t KvHeadsPerRank(const AttentionSpec& a, uint64_t tp);

// K and V of one token in one full or sliding-window layer on one rank:
// KvHeadsPerRank x 2 x head_dim x `elem_bytes`.
uint64_t KvBytesPerToken(const AttentionSpec& a, uint64_t tp, uint64_t elem_bytes);

// MLA (DeepSeek): one compressed latent of kv_lora_rank + qk_rope_head_dim per token, no
// separate K and V, not sharded by tensor parallelism.
uint64_t MlaBytesPerToken(const AttentionSpec& a, uint64_t elem_bytes);

// The state one sequence keeps in one linear-attention layer on one rank, whatever its length
// (mamba_utils.py gated_delta_net_state_shape):
//   conv      ((2 x Hk x dk + Hv x dv) / tp) x (conv_kernel - 1 + speculative tokens) in the
//             model dtype
//   recurrent (Hv / tp) x dv x dk in the SSM state dtype (Qwen3.5: float32)
struct LinearState {
  uint64_t conv_bytes = 0;
  uint64_t recurrent_bytes = 0;
  uint64_t total() const { return conv_bytes + recurrent_bytes; }
};
// A Mamba2 mixer (AttentionSpec::mamba2): conv (intermediate + 2 x groups x state) / tp x
// (conv_kernel - 1 + speculative tokens) in the model dtype, recurrent (heads / tp) x head_dim x
// state in the SSM state dtype; groups tp cannot split are replicated up to tp.
// kInvalidArgument when tp does not divide the key or value heads (the Mamba2 heads).
Result<LinearState> LinearAttentionState(const AttentionSpec& a, uint64_t tp,
                                         int64_t speculative_tokens, Dtype model_dtype,
                                         Dtype state_dtype);

}  // namespace vramfit

#endif  // VRAMFIT_MODEL_KV_STATE_H_
