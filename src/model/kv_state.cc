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

Result<LinearState> LinearAttentionState(const AttentionSpec& a, uint64_t tp,
                                         int64_t speculative_tokens, Dtype model_dtype,
                                         Dtype state_dtype) {
  const uint64_t hk = a.linear_num_key_heads, hv = a.linear_num_value_heads;
  if (hk % tp != 0 || hv % tp != 0) {
    return Status::InvalidArgument(fmt::format(
        "--tensor-parallel-size {} does not divide the linear-attention heads ({} key, {} value)",
        tp, hk, hv));
  }
  const uint64_t conv_dim = 2 * hk * a.linear_key_head_dim + hv * a.linear_value_head_dim;
  LinearState s;
  s.conv_bytes = conv_dim / tp *
                 static_cast<uint64_t>(a.linear_conv_kernel_dim - 1 + speculative_tokens) *
                 static_cast<uint64_t>(DtypeBits(model_dtype) / 8);
  s.recurrent_bytes = hv / tp * a.linear_value_head_dim * a.linear_key_head_dim *
                      static_cast<uint64_t>(DtypeBits(state_dtype) / 8);
  return s;
}

}  // namespace vramfit
