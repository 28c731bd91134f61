// Test-side GGUF models for the llama.cpp room's tests and its validation: a model described by
// the hyperparameters llama.cpp prints (print_info: n_layer, n_embd, n_head, n_head_kv,
// n_embd_head_k/v, n_ff, n_swa, experts, MLA and SSM sizes) is written as a hollow GGUF file
// with the tensors the loader creates for it, in one weight type (a type that does not divide
// a tensor's rows falls back to Q8_0, then F16). When the real file's tensor bytes are known
// (print_info's "file size", which is the sum of the tensors), each layer gets an F32 remainder
// tensor so the layers add up to it: the per-type mix of a Q4_K_M file is not in the log.
#ifndef VRAMFIT_ENGINES_LLAMACPP_TEST_MODELS_H_
#define VRAMFIT_ENGINES_LLAMACPP_TEST_MODELS_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "testutil/gguf_writer.h"
#include "vramfit/gguf.h"

namespace vramfit::llamacpp::testing {

struct Hparams {
  std::string arch = "llama";
  uint32_t n_layer = 0, n_embd = 0, n_head = 0, n_head_kv = 0, head_k = 0, head_v = 0;
  uint32_t n_ff = 0, n_vocab = 0, n_ctx_train = 4096;
  uint32_t n_swa = 0, swa_period = 0;  // window; layer i is global iff (i + 1) % period == 0
  uint32_t n_expert = 0, n_expert_used = 0, n_ff_exp = 0, n_ff_shexp = 0, dense_lead = 0;
  uint32_t kv_lora = 0, q_lora = 0, rope_dim = 0, k_mla = 0, v_mla = 0;  // MLA
  uint32_t full_attn_interval = 0, ssm_conv = 0, ssm_state = 0, ssm_groups = 0, ssm_rank = 0,
           ssm_inner = 0;  // hybrid Gated DeltaNet
  bool tied = false;
  bool gated_ffn = true;  // gate + up + down (false: up + down, as GPT-NeoX)
  Dtype layer_type = Dtype::kQ4_K, embd_type = Dtype::kQ4_K, output_type = Dtype::kQ6_K;
  Dtype attn_type = Dtype::kBool;  // attention and dense FFN tensors (kBool: as layer_type)
  uint64_t file_bytes = 0;  // print_info's file size in bytes; 0: no remainder tensors
};

// The type a [rows, cols] matrix gets: `t` when its block divides cols, else Q8_0, else F16.
inline Dtype Fit(Dtype t, uint64_t cols) {
  const GgmlType* g = GgmlTypeOf(t);
  if (g != nullptr && cols % g->block == 0) return t;
  return cols % 32 == 0 ? Dtype::kQ8_0 : Dtype::kF16;
}

// Writes the model's header to `path` (hollow data); returns the tensor bytes written.
inline uint64_t WriteModel(const Hparams& h, const std::string& path) {
  vramfit::testing::GgufWriter w;
  const std::string a = h.arch;
  w.Str("general.architecture", a);
  w.Str("general.name", "test");
  w.U32(a + ".block_count", h.n_layer);
  w.U32(a + ".embedding_length", h.n_embd);
  w.U32(a + ".context_length", h.n_ctx_train);
  w.U32(a + ".feed_forward_length", h.n_ff);
  w.U32(a + ".attention.head_count", h.n_head);
  const bool mla = h.kv_lora > 0;
  w.U32(a + ".attention.head_count_kv", mla ? 1 : h.n_head_kv);
  w.U32(a + ".attention.key_length", mla ? h.kv_lora + h.rope_dim : h.head_k);
  w.U32(a + ".attention.value_length", mla ? h.kv_lora : h.head_v);
  if (h.n_swa > 0) {
    w.U32(a + ".attention.sliding_window", h.n_swa);
    if (h.swa_period > 0) w.U32(a + ".attention.sliding_window_pattern", h.swa_period);
  }
  if (h.n_expert > 0) {
    w.U32(a + ".expert_count", h.n_expert);
    w.U32(a + ".expert_used_count", h.n_expert_used);
    w.U32(a + ".expert_feed_forward_length", h.n_ff_exp);
    if (h.n_ff_shexp > 0) w.U32(a + ".expert_shared_feed_forward_length", h.n_ff_shexp);
    if (h.dense_lead > 0) w.U32(a + ".leading_dense_block_count", h.dense_lead);
  }
  if (mla) {
    w.U32(a + ".attention.kv_lora_rank", h.kv_lora);
    if (h.q_lora > 0) w.U32(a + ".attention.q_lora_rank", h.q_lora);
    w.U32(a + ".rope.dimension_count", h.rope_dim);
    w.U32(a + ".attention.key_length_mla", h.k_mla);
    w.U32(a + ".attention.value_length_mla", h.v_mla);
  }
  if (h.full_attn_interval > 0) {
    w.U32(a + ".full_attention_interval", h.full_attn_interval);
    w.U32(a + ".ssm.conv_kernel", h.ssm_conv);
    w.U32(a + ".ssm.state_size", h.ssm_state);
    w.U32(a + ".ssm.group_count", h.ssm_groups);
    w.U32(a + ".ssm.time_step_rank", h.ssm_rank);
    w.U32(a + ".ssm.inner_size", h.ssm_inner);
  }
  uint64_t total = 0;
  auto T = [&](const std::string& name, Dtype t, std::vector<uint64_t> shape) {
    t = shape.size() >= 2 ? Fit(t, shape.back()) : t;
    w.Tensor(name, t, shape);
    total += vramfit::testing::GgufTensorBytes(t, shape);
  };
  const uint64_t e = h.n_embd;
  const Dtype et = h.layer_type;  // experts
  const Dtype lt = h.attn_type == Dtype::kBool ? h.layer_type : h.attn_type;
  T("token_embd.weight", Fit(h.embd_type, e), {h.n_vocab, e});
  std::vector<uint64_t> layer_bytes(h.n_layer, 0), expert_bytes(h.n_layer, 0);
  for (uint32_t i = 0; i < h.n_layer; ++i) {
    const uint64_t before = total;
    const std::string p = "blk." + std::to_string(i) + ".";
    T(p + "attn_norm.weight", Dtype::kF32, {e});
    const bool linear = h.full_attn_interval > 0 && (i + 1) % h.full_attn_interval != 0;
    if (linear) {
      const uint64_t conv = 2ull * h.ssm_groups * h.ssm_state + h.ssm_inner;
      T(p + "attn_qkv.weight", lt, {conv, e});
      T(p + "attn_gate.weight", lt, {h.ssm_inner, e});
      T(p + "ssm_conv1d.weight", Dtype::kF32, {conv, h.ssm_conv});
      T(p + "ssm_out.weight", lt, {e, h.ssm_inner});
    } else if (mla) {
      T(p + "attn_q.weight", lt, {uint64_t{h.n_head} * h.k_mla, e});
      T(p + "attn_kv_a_mqa.weight", lt, {uint64_t{h.kv_lora} + h.rope_dim, e});
      T(p + "attn_kv_b.weight", lt,
        {uint64_t{h.n_head} * (h.k_mla - h.rope_dim + h.v_mla), h.kv_lora});
      T(p + "attn_output.weight", lt, {e, uint64_t{h.n_head} * h.v_mla});
    } else {
      T(p + "attn_q.weight", lt, {uint64_t{h.n_head} * h.head_k, e});
      T(p + "attn_k.weight", lt, {uint64_t{h.n_head_kv} * h.head_k, e});
      T(p + "attn_v.weight", lt, {uint64_t{h.n_head_kv} * h.head_v, e});
      T(p + "attn_output.weight", lt, {e, uint64_t{h.n_head} * h.head_v});
    }
    T(p + "ffn_norm.weight", Dtype::kF32, {e});
    if (h.n_expert > 0 && i >= h.dense_lead) {
      T(p + "ffn_gate_inp.weight", Dtype::kF32, {h.n_expert, e});
      const uint64_t experts_from = total;
      T(p + "ffn_gate_exps.weight", et, {h.n_expert, h.n_ff_exp, e});
      T(p + "ffn_up_exps.weight", et, {h.n_expert, h.n_ff_exp, e});
      T(p + "ffn_down_exps.weight", et, {h.n_expert, e, h.n_ff_exp});
      expert_bytes[i] = total - experts_from;
      if (h.n_ff_shexp > 0) {
        T(p + "ffn_gate_shexp.weight", lt, {h.n_ff_shexp, e});
        T(p + "ffn_up_shexp.weight", lt, {h.n_ff_shexp, e});
        T(p + "ffn_down_shexp.weight", lt, {e, h.n_ff_shexp});
      }
    } else {
      if (h.gated_ffn) T(p + "ffn_gate.weight", lt, {h.n_ff, e});
      T(p + "ffn_up.weight", lt, {h.n_ff, e});
      T(p + "ffn_down.weight", lt, {e, h.n_ff});
    }
    layer_bytes[i] = total - before;
  }
  T("output_norm.weight", Dtype::kF32, {e});
  if (!h.tied) T("output.weight", Fit(h.output_type, e), {h.n_vocab, e});
  // The remainder, spread over each layer's tensors in proportion to their bytes: the expert
  // share as an expert-named tensor (so -ot and --cpu-moe move it with the experts).
  if (h.file_bytes > total && h.n_layer > 0) {
    const uint64_t rest = (h.file_bytes - total) / h.n_layer;
    for (uint32_t i = 0; i < h.n_layer && rest >= 8; ++i) {
      const std::string p = "blk." + std::to_string(i) + ".";
      const uint64_t ex = layer_bytes[i] > 0 ? rest * expert_bytes[i] / layer_bytes[i] : 0;
      if (ex >= 4) T(p + "ffn_down_exps.rest", Dtype::kF32, {ex / 4});
      if (rest - ex >= 4) T(p + "rest", Dtype::kF32, {(rest - ex) / 4});
    }
  }
  w.WriteHollow(path);
  return total;
}

}  // namespace vramfit::llamacpp::testing

#endif  // VRAMFIT_ENGINES_LLAMACPP_TEST_MODELS_H_
