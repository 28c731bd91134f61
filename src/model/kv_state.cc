// Per-layer cache formulas (see kv_state.h).
#include "model/kv_state.h"

#include <fmt/format.h>

#include <algorithm>

namespace vramfit {

uint64_t KvHeadsPerRank(const AttentionSpec& a, uint64_t tp) {
  return std::max<uint64_t>(1, static_cast<uint64_t>(a.num_kv_heads) / tp);
}

uint64_t KvBytesPerToken(const AttentionSpec& a, uint64_t tp, uint64_t elem_bytes) {
  return KvHeadsPerRank(a, tp) * 2 * static_cast<uint64_t>(a.head_dim) * elem_bytes;
}

uint64_t MlaBytesPerToken(const AttentionSpec& a, uint64_t elem_bytes) {
  return static_cast<uint64_t>(a.kv_lora_rank + a.qk_rope_head_dim) * elem_bytes;
}

namespace {
// One rank's state: the conv window (kernel - 1, plus a slot per speculative token) over
// `conv_width` channels in the model dtype, and `recurrent_elems` in the state dtype.
LinearState StateBytes(uint64_t conv_width, int64_t kernel, int64_t speculative_tokens,
                       Dtype model_dtype, uint64_t recurrent_elems, Dtype state_dtype) {
  LinearState s;
  s.conv_bytes = conv_width * static_cast<uint64_t>(kernel - 1 + speculative_tokens) *
                 static_cast<uint64_t>(DtypeBits(model_dtype) / 8);
  s.recurrent_bytes = recurrent_elems * static_cast<uint64_t>(DtypeBits(state_dtype) / 8);
  return s;
}

// A Mamba2 mixer's state (MambaStateShapeCalculator.mamba2_state_shape, vLLM
// model_executor/layers/mamba/mamba_utils.py, read at 0.22): groups that tensor parallelism
// cannot split are replicated so each head's group travels with it (extra_groups_for_head_shards:
// n_groups + tp - n_groups when tp does not divide them).
Result<LinearState> Mamba2State(const AttentionSpec& a, uint64_t tp, int64_t speculative_tokens,
                                Dtype model_dtype, Dtype state_dtype) {
  const uint64_t heads = a.mamba_num_heads;
  const uint64_t groups =
      a.mamba_groups % tp == 0 ? a.mamba_groups : a.mamba_groups + (tp - a.mamba_groups % tp);
  const uint64_t conv_dim = a.mamba_intermediate + 2 * groups * a.mamba_state_size;
  if (heads % tp != 0 || conv_dim % tp != 0) {
    return Status::InvalidArgument(fmt::format(
        "--tensor-parallel-size {} does not divide the Mamba2 heads ({}) or the conv width ({})",
        tp, heads, conv_dim));
  }
  return StateBytes(conv_dim / tp, a.linear_conv_kernel_dim, speculative_tokens, model_dtype,
                    heads / tp * a.mamba_head_dim * a.mamba_state_size, state_dtype);
}
}  // namespace

Result<LinearState> LinearAttentionState(const AttentionSpec& a, uint64_t tp,
                                         int64_t speculative_tokens, Dtype model_dtype,
                                         Dtype state_dtype) {
  if (a.mamba2) return Mamba2State(a, tp, speculative_tokens, model_dtype, state_dtype);
  const uint64_t hk = a.linear_num_key_heads, hv = a.linear_num_value_heads;
  if (hk % tp != 0 || hv % tp != 0) {
    return Status::InvalidArgument(fmt::format(
        "--tensor-parallel-size {} does not divide the linear-attention heads ({} key, {} value)",
        tp, hk, hv));
  }
  const uint64_t conv_dim = 2 * hk * a.linear_key_head_dim + hv * a.linear_value_head_dim;
  return StateBytes(conv_dim / tp, a.linear_conv_kernel_dim, speculative_tokens, model_dtype,
                    hv / tp * a.linear_value_head_dim * a.linear_key_head_dim, state_dtype);
}

}  // namespace vramfit
