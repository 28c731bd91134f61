// GGUF what-if (see gguf_what_if.h). Two steps, each llama.cpp's own:
//   convert  convert_hf_to_gguf.py (ec98e2002): tensor names of gguf-py tensor_mapping.py
//            (blk.N.attn_q.weight, ffn_gate_exps, ...), shapes as the checkpoint has them,
//            1-D tensors, norms, biases and the MoE router (ffn_gate_inp) in F32
//            (prepare_tensors: "n_dims <= 1 or new_name.endswith('_norm.weight')", and the
//            FFN_GATE_INP row of its always-F32 list), other weights in the model's float type,
//            gpt-oss's MXFP4 experts kept MXFP4 (GptOssModel repacks the blocks)
//   quantize src/llama-quant.cpp llama_tensor_get_type (ec98e2002): tensor_allows_quantization
//            first, then the file type's per-tensor mix, then the fallback for a row size that
//            is not a whole number of blocks
#include "model/gguf_what_if.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

#include "core/text.h"

namespace vramfit {
namespace {

// llama.h llama_ftype ids and llama-quant.cpp llama_ftype_get_default_type.
constexpr std::array<GgufFtypeInfo, 10> kFtypes = {{
    {GgufFtype::kQ4_K_M, "Q4_K_M", 15, Dtype::kQ4_K},
    {GgufFtype::kQ4_K_S, "Q4_K_S", 14, Dtype::kQ4_K},
    {GgufFtype::kQ5_K_M, "Q5_K_M", 17, Dtype::kQ5_K},
    {GgufFtype::kQ6_K, "Q6_K", 18, Dtype::kQ6_K},
    {GgufFtype::kQ8_0, "Q8_0", 7, Dtype::kQ8_0},
    {GgufFtype::kQ4_0, "Q4_0", 2, Dtype::kQ4_0},
    {GgufFtype::kF16, "F16", 1, Dtype::kF16},
    {GgufFtype::kBF16, "BF16", 32, Dtype::kBF16},
    {GgufFtype::kMxfp4Moe, "MXFP4_MOE", 38, Dtype::kMXFP4},
    // The converter writes gpt-oss with general.file_type MXFP4_MOE as well.
    {GgufFtype::kMxfp4, "MXFP4", 38, Dtype::kMXFP4},
}};

bool Has(std::string_view s, std::string_view part) { return s.find(part) != s.npos; }

// The layer index of "blk.N...." (llama-quant.cpp layer_info: sscanf(name, "blk.%d.")), -1
// for a tensor outside the layers.
int64_t LayerOf(std::string_view name) {
  if (!name.starts_with("blk.")) return -1;
  int64_t n = 0;
  size_t i = 4;
  if (i >= name.size() || !std::isdigit(static_cast<unsigned char>(name[i]))) return -1;
  for (; i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])); ++i) {
    n = n * 10 + (name[i] - '0');
    if (n > 1'000'000) return -1;
  }
  return n;
}

uint64_t Block(Dtype d) {
  const GgmlType* t = GgmlTypeOf(d);
  return t == nullptr ? 1 : t->block;
}

bool IsQuantized(Dtype d) { return IsGgmlBlockType(d); }

// llama-quant.cpp tensor_allows_quantization (the names of the families modelled here): 2-D
// or 3-D tensors whose name ends in "weight", not a norm, not the MoE router.
bool AllowsQuantization(std::string_view name, const Shape& shape) {
  if (shape.size() < 2) return false;
  if (!name.ends_with("weight")) return false;
  if (Has(name, "_norm.weight")) return false;
  if (Has(name, "ffn_gate_inp.weight")) return false;
  // "do not quantize Mamba /Kimi's small conv1d weights" (the Gated DeltaNet conv too).
  if (Has(name, "ssm_conv1d")) return false;
  return true;
}

// use_more_bits: the first and last eighth of the layers and every third between.
bool UseMoreBits(int64_t i, int64_t n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

// llama_tensor_get_type's mix for the file types modelled (the IQ and Q2/Q3 rows are not).
Dtype Mix(const GgufQuantModel& m, GgufFtype ft, std::string_view name, const Shape& shape,
          Dtype t) {
  const bool km = ft == GgufFtype::kQ4_K_M, ks = ft == GgufFtype::kQ4_K_S;
  const uint64_t ne0 = shape[shape.size() - 1];
  // output.weight, and token_embd when the model has no output.weight (tied): Q8_0 for
  // MXFP4_MOE or a row that is not whole blocks of the base type, else Q6_K unless Q8_0.
  // Gemma 3n/4's per_layer_token_embd takes the same type: a published E2B Q4_K_M file lists
  // it as Q6_K, 1,926.8 MB for 262,144 x 8,960, beside a Q6_K token_embd of 330.3 MB (a
  // third-party tensor table, code-index file 60041999923).
  if (name == "output.weight" || (m.tied && name == "token_embd.weight") ||
      name == "per_layer_token_embd.weight") {
    if (ft == GgufFtype::kMxfp4Moe || ne0 % Block(t) != 0) return Dtype::kQ8_0;
    return t != Dtype::kQ8_0 ? Dtype::kQ6_K : t;
  }
  // MXFP4_MOE: the 3-D expert tensors (ne[2] > 1) MXFP4, every other one Q8_0.
  if (ft == GgufFtype::kMxfp4Moe) {
    return shape.size() >= 3 && shape[0] > 1 ? Dtype::kMXFP4 : Dtype::kQ8_0;
  }
  // token_embd (untied) keeps the base type for the K and legacy types.
  if (name == "token_embd.weight") return t;
  const int64_t il = LayerOf(name);
  if (Has(name, "attn_v.weight")) {
    // attn_v: i_attention_wv counts attn_v tensors in file order, one per layer, so it is
    // the layer index; n_attention_wv counts attn_v and attn_qkv tensors, n_layer. In a
    // hybrid model (Qwen3-Next, Qwen3.5) only every interval-th layer has an attn_v, the
    // others an attn_qkv, so the index is the full-attention layers before this one while
    // n_attention_wv stays n_layer.
    const int64_t iwv =
        m.full_attention_interval > 0 ? (il + 1) / m.full_attention_interval - 1 : il;
    if ((km || ft == GgufFtype::kQ5_K_M) && UseMoreBits(iwv, m.n_layer)) {
      t = Dtype::kQ6_K;
    } else if (ks && iwv < 4) {
      t = Dtype::kQ5_K;
    }
    // "In the 70B model we have 8 heads sharing the same attn_v weights": Q4_K -> Q5_K.
    if (m.type_70b && t == Dtype::kQ4_K) t = Dtype::kQ5_K;
    // The 8-expert model (Mixtral): attn_v in Q8_0.
    if (m.n_expert == 8) t = Dtype::kQ8_0;
    return t;
  }
  if (Has(name, "attn_k.weight")) return m.n_expert == 8 ? Dtype::kQ8_0 : t;
  // A fused attn_qkv (Phi-3, and the Gated DeltaNet layers' q/k/v of Qwen3-Next and
  // Qwen3.5): Q5_K for Q4_K_M, Q6_K for Q5_K_M.
  if (Has(name, "attn_qkv.weight")) {
    if (km) return Dtype::kQ5_K;
    if (ft == GgufFtype::kQ5_K_M) return Dtype::kQ6_K;
    return t;
  }
  if (Has(name, "ffn_down")) {
    // i_layer: the name's layer for MoE models (n_expert > 1), else the running count of
    // ffn_down tensors, the layer index again (one per layer); n_layer is hparams.n_layer.
    if (km && UseMoreBits(il, m.n_layer)) return Dtype::kQ6_K;
    if (ft == GgufFtype::kQ5_K_M && UseMoreBits(il, m.n_layer)) return Dtype::kQ6_K;
    if (ks && il < m.n_layer / 8) return Dtype::kQ5_K;
    return t;
  }
  if (Has(name, "attn_output.weight")) {
    // The 8-expert model: Q5_K for Q4_K_S and Q4_K_M (among the low-bit types).
    if (m.n_expert == 8 && (km || ks)) return Dtype::kQ5_K;
    return t;
  }
  return t;
}

// The fallback for a row (ne[0]) that is not whole blocks of the chosen type: Q4_K -> Q5_0,
// Q5_K -> Q5_1, Q6_K -> Q8_0, and F16 when even that does not divide it.
Dtype Fallback(const Shape& shape, Dtype t) {
  const uint64_t ne0 = shape[shape.size() - 1];
  if (ne0 % Block(t) == 0) return t;
  Dtype f = Dtype::kF16;
  if (t == Dtype::kQ4_K) f = Dtype::kQ5_0;
  if (t == Dtype::kQ5_K) f = Dtype::kQ5_1;
  if (t == Dtype::kQ6_K) f = Dtype::kQ8_0;
  return ne0 % Block(f) == 0 ? f : Dtype::kF16;
}

// ---- the converted file's tensors ----

struct Writer {
  GgufFile* file;
  Dtype float_type;  // the converter's type for 2-D weights
  uint64_t offset = 0;
};

constexpr uint64_t kAlignment = 32;  // GGUF_DEFAULT_ALIGNMENT

Status Add(Writer& w, std::string name, Shape shape, Dtype type) {
  const GgmlType* g = GgmlTypeOf(type);
  if (g == nullptr) {
    return Status::Unsupported(fmt::format("{}: {} has no ggml type", name, DtypeName(type)));
  }
  uint64_t elements = 1;
  for (uint64_t d : shape) elements *= d;
  const uint64_t ne0 = shape.empty() ? 1 : shape[shape.size() - 1];
  if (ne0 % g->block != 0) {
    return Status::Unsupported(fmt::format(
        "{}: a row of {} is not whole {} blocks (llama-quantize refuses it)", name, ne0,
        DtypeName(type)));
  }
  TensorInfo t;
  t.name = std::move(name);
  t.dtype = type;
  t.shape = std::move(shape);
  t.elements = elements;
  t.begin = (w.offset + kAlignment - 1) / kAlignment * kAlignment;
  t.end = t.begin + elements / g->block * g->bytes;
  w.offset = t.end;
  w.file->tensors.push_back(std::move(t));
  return Status::Ok();
}

// A converted tensor: F32 when 1-D, a norm, a bias or the router; the float type otherwise.
Status AddConverted(Writer& w, std::string name, Shape shape, Dtype keep = Dtype::kBool) {
  Dtype t = w.float_type;
  if (shape.size() <= 1 || name.ends_with("_norm.weight") || !name.ends_with(".weight") ||
      Has(name, "ffn_gate_inp.weight")) {
    t = Dtype::kF32;
  }
  if (keep != Dtype::kBool) t = keep;
  return Add(w, std::move(name), std::move(shape), t);
}

struct ArchOf {
  std::string_view family;
  std::string_view arch;
};
// vramfit family -> convert_hf_to_gguf.py model class's gguf arch (MistralForCausalLM and
// MixtralForCausalLM are converted as "llama").
constexpr std::array<ArchOf, 24> kArchOf = {{
    {"llama", "llama"},     {"mistral", "llama"},      {"mixtral", "llama"},
    {"qwen2", "qwen2"},     {"qwen2_moe", "qwen2moe"}, {"qwen3", "qwen3"},
    {"qwen3_moe", "qwen3moe"}, {"gemma2", "gemma2"},   {"gemma3", "gemma3"},
    {"gpt_oss", "gpt-oss"}, {"gemma4", "gemma4"},      {"phi3", "phi3"},
    {"glm4_moe", "glm4moe"},
    // DeepseekV2Model converts DeepSeek-V2/V3 and Kimi-K2 (DeepseekV3ForCausalLM) alike.
    {"deepseek_v2", "deepseek2"}, {"deepseek_v3", "deepseek2"}, {"kimi_k2", "deepseek2"},
    // MiniMaxM2Model: q/k norms over all heads, 256 experts, the router's exp_probs_b.
    {"minimax_m2", "minimax-m2"},
    // Qwen3NextModel and its Qwen3_5TextModel / Qwen3_5MoeTextModel subclasses (fc0fe4004,
    // the first build that converts Qwen3.5; the Qwen3.6 checkpoints are the same classes).
    {"qwen3_next", "qwen3next"}, {"qwen3_5", "qwen35"}, {"qwen3_5_moe", "qwen35moe"},
    // The vision-language models' text halves (Qwen2VLModel, Qwen3VLTextModel,
    // Qwen3VLMoeTextModel, ec98e2002): the blocks of qwen2 / qwen3 / qwen3moe, the visual.*
    // tensors skipped (they go to the mmproj file).
    {"qwen2_vl", "qwen2vl"}, {"qwen2_5_vl", "qwen2vl"}, {"qwen3_vl", "qwen3vl"},
    {"qwen3_vl_moe", "qwen3vlmoe"},
}};

// Gated DeltaNet hybrids: linear-attention layers with every full_attention_interval-th layer
// a gated full-attention one.
bool IsHybridFamily(std::string_view family) {
  return family == "qwen3_next" || family == "qwen3_5" || family == "qwen3_5_moe";
}

// The layers' period of full attention (layer i is full iff (i + 1) % p == 0), 0 when the
// layers do not follow one.
int64_t FullAttentionInterval(const ModelSpec& s) {
  int64_t p = 0;
  for (size_t i = 0; i < s.layers.size(); ++i) {
    if (s.layers[i].attention.kind != AttentionKind::kLinear) {
      p = static_cast<int64_t>(i) + 1;
      break;
    }
  }
  if (p <= 1) return 0;
  for (size_t i = 0; i < s.layers.size(); ++i) {
    const bool full = (static_cast<int64_t>(i) + 1) % p == 0;
    if (full != (s.layers[i].attention.kind != AttentionKind::kLinear)) return 0;
  }
  return p;
}

// GLM-4.5/4.6 (Glm4MoeModel, ec98e2002): the NextN (MTP) layers are written after the decoder
// layers as blocks of their own (block_count = num_hidden_layers + num_nextn_predict_layers),
// each a whole decoder layer plus its nextn.* tensors; llama.cpp loads them with TENSOR_SKIP
// and gives them no KV cache (n_layer_kv_from_start).
bool WritesNextnBlocks(const ModelSpec& s) { return s.family == "glm4_moe" && s.mtp_layers > 0; }

// The layer an MTP block repeats: the last decoder layer, with the last full-attention layer's
// attention (synth.cc's MTP layer).
LayerSpec MtpLayer(const ModelSpec& s) {
  LayerSpec l = s.layers.back();
  for (const LayerSpec& x : s.layers) {
    if (x.attention.kind == AttentionKind::kFull) l.attention = x.attention;
  }
  return l;
}

// A Gated DeltaNet hybrid's attention (Qwen3NextModel.modify_tensors, fc0fe4004; the shapes
// llama-model.cpp's LLM_ARCH_QWEN3NEXT / QWEN35 / QWEN35MOE loaders create). Full layers: q
// with its output gate (2 x heads x head_dim rows), k, v, o and the per-head q/k norms. Linear
// layers: q/k/v as one attn_qkv and the z gate as attn_gate (Qwen3-Next's fused in_proj_qkvz
// split in two, Qwen3.5's in_proj_qkv / in_proj_z as they are), the conv kernel ssm_conv1d
// (squeezed to [conv_dim, d_conv]; F32 by the converter's list), dt_bias as ssm_dt.bias,
// A_log as ssm_a, beta and alpha as Qwen3-Next's one ssm_ba [2 x v heads] or Qwen3.5's
// ssm_beta and ssm_alpha [v heads each], the gated norm ssm_norm [head_v_dim] and ssm_out.
// The MTP block (mtp.*) is skipped ("ignore MTP layers for now"): builds from May 2026
// (PR #22673) write it as a nextn block unless --no-mtp, a file this what-if does not make.
Status HybridAttention(Writer& w, const ModelSpec& s, const AttentionSpec& a,
                       const std::string& p) {
  const uint64_t h = static_cast<uint64_t>(s.hidden_size);
  auto add = [&](std::string_view n, Shape shape, Dtype keep = Dtype::kBool) {
    return AddConverted(w, p + std::string(n), std::move(shape), keep);
  };
  if (a.kind == AttentionKind::kLinear) {
    const uint64_t kh = static_cast<uint64_t>(a.linear_num_key_heads);
    const uint64_t vh = static_cast<uint64_t>(a.linear_num_value_heads);
    const uint64_t key = kh * static_cast<uint64_t>(a.linear_key_head_dim);
    const uint64_t vd = static_cast<uint64_t>(a.linear_value_head_dim);
    const uint64_t value = vh * vd, conv = 2 * key + value;
    VRAMFIT_RETURN_IF_ERROR(add("attn_qkv.weight", {conv, h}));
    VRAMFIT_RETURN_IF_ERROR(add("attn_gate.weight", {value, h}));
    VRAMFIT_RETURN_IF_ERROR(
        add("ssm_conv1d.weight", {conv, static_cast<uint64_t>(a.linear_conv_kernel_dim)},
            Dtype::kF32));
    VRAMFIT_RETURN_IF_ERROR(add("ssm_dt.bias", {vh}));
    VRAMFIT_RETURN_IF_ERROR(add("ssm_a", {vh}));
    if (s.family == "qwen3_next") {
      VRAMFIT_RETURN_IF_ERROR(add("ssm_ba.weight", {2 * vh, h}));
    } else {
      VRAMFIT_RETURN_IF_ERROR(add("ssm_beta.weight", {vh, h}));
      VRAMFIT_RETURN_IF_ERROR(add("ssm_alpha.weight", {vh, h}));
    }
    VRAMFIT_RETURN_IF_ERROR(add("ssm_norm.weight", {vd}));
    return add("ssm_out.weight", {h, value});
  }
  const uint64_t hd = static_cast<uint64_t>(a.head_dim > 0 ? a.head_dim
                                                            : s.hidden_size / a.num_heads);
  const uint64_t q = static_cast<uint64_t>(a.num_heads) * hd;
  const uint64_t kv = static_cast<uint64_t>(a.num_kv_heads) * hd;
  VRAMFIT_RETURN_IF_ERROR(add("attn_q.weight", {a.output_gate ? 2 * q : q, h}));
  VRAMFIT_RETURN_IF_ERROR(add("attn_k.weight", {kv, h}));
  VRAMFIT_RETURN_IF_ERROR(add("attn_v.weight", {kv, h}));
  VRAMFIT_RETURN_IF_ERROR(add("attn_output.weight", {h, q}));
  VRAMFIT_RETURN_IF_ERROR(add("attn_q_norm.weight", {hd}));
  return add("attn_k_norm.weight", {hd});
}

Status LayerTensors(Writer& w, const ModelSpec& s, const LayerSpec& l, size_t il,
                    bool mxfp4_experts) {
  const AttentionSpec& a = l.attention;
  const MlpSpec& m = l.mlp;
  const uint64_t h = static_cast<uint64_t>(s.hidden_size);
  const uint64_t hd = static_cast<uint64_t>(
      a.head_dim > 0 ? a.head_dim : (a.num_heads > 0 ? s.hidden_size / a.num_heads : 0));
  const uint64_t q = static_cast<uint64_t>(a.num_heads) * hd;
  const uint64_t kv = static_cast<uint64_t>(a.num_kv_heads) * hd;
  const std::string p = fmt::format("blk.{}.", il);
  auto add = [&](std::string_view n, Shape shape) { return AddConverted(w, p + std::string(n),
                                                                        std::move(shape)); };
  VRAMFIT_RETURN_IF_ERROR(add("attn_norm.weight", {h}));
  const bool hybrid = IsHybridFamily(s.family);
  if (hybrid) VRAMFIT_RETURN_IF_ERROR(HybridAttention(w, s, a, p));
  if (a.kind == AttentionKind::kMla) {
    // DeepseekV2Model: q through its LoRA (attn_q_a, attn_q_a_norm, attn_q_b) or whole
    // (attn_q), the compressed KV (attn_kv_a_mqa: kv_lora_rank + the rope part, and its norm),
    // and kv_b_proj split per head for the absorbed MLA: k_b [heads, kv_lora, nope] (transposed)
    // and v_b [heads, v_head_dim, kv_lora], then the output.
    const uint64_t nh = static_cast<uint64_t>(a.num_heads);
    const uint64_t nope = static_cast<uint64_t>(a.qk_nope_head_dim);
    const uint64_t rope = static_cast<uint64_t>(a.qk_rope_head_dim);
    const uint64_t vd = static_cast<uint64_t>(a.v_head_dim);
    const uint64_t kvl = static_cast<uint64_t>(a.kv_lora_rank);
    const uint64_t ql = static_cast<uint64_t>(std::max<int64_t>(0, a.q_lora_rank));
    if (ql > 0) {
      VRAMFIT_RETURN_IF_ERROR(add("attn_q_a.weight", {ql, h}));
      VRAMFIT_RETURN_IF_ERROR(add("attn_q_a_norm.weight", {ql}));
      VRAMFIT_RETURN_IF_ERROR(add("attn_q_b.weight", {nh * (nope + rope), ql}));
    } else {
      VRAMFIT_RETURN_IF_ERROR(add("attn_q.weight", {nh * (nope + rope), h}));
    }
    VRAMFIT_RETURN_IF_ERROR(add("attn_kv_a_mqa.weight", {kvl + rope, h}));
    VRAMFIT_RETURN_IF_ERROR(add("attn_kv_a_norm.weight", {kvl}));
    VRAMFIT_RETURN_IF_ERROR(add("attn_k_b.weight", {nh, kvl, nope}));
    VRAMFIT_RETURN_IF_ERROR(add("attn_v_b.weight", {nh, vd, kvl}));
    VRAMFIT_RETURN_IF_ERROR(add("attn_output.weight", {h, nh * vd}));
  }
  // Phi-3/Phi-4 (Phi3MiniModel; llama-model.cpp LLM_ARCH_PHI3): the checkpoint's fused
  // qkv_proj and gate_up_proj kept fused, attn_qkv [n_embd + 2 n_embd_gqa] and ffn_up [2 n_ff].
  if (s.family == "phi3" && m.kind == MlpKind::kDense) {
    const uint64_t ff = static_cast<uint64_t>(m.intermediate_size);
    VRAMFIT_RETURN_IF_ERROR(add("attn_qkv.weight", {q + 2 * kv, h}));
    VRAMFIT_RETURN_IF_ERROR(add("attn_output.weight", {h, q}));
    VRAMFIT_RETURN_IF_ERROR(add("ffn_norm.weight", {h}));
    VRAMFIT_RETURN_IF_ERROR(add("ffn_up.weight", {2 * ff, h}));
    return add("ffn_down.weight", {h, ff});
  }
  if (a.kind != AttentionKind::kMla && !hybrid) {
    VRAMFIT_RETURN_IF_ERROR(add("attn_q.weight", {q, h}));
    // Gemma 4: KV-shared layers have no k/v tensors, K = V layers no attn_v.
    if (!a.kv_shared) VRAMFIT_RETURN_IF_ERROR(add("attn_k.weight", {kv, h}));
    if (!a.kv_shared && !a.k_eq_v) VRAMFIT_RETURN_IF_ERROR(add("attn_v.weight", {kv, h}));
    VRAMFIT_RETURN_IF_ERROR(add("attn_output.weight", {h, q}));
    if (a.qkv_bias) {
      VRAMFIT_RETURN_IF_ERROR(add("attn_q.bias", {q}));
      VRAMFIT_RETURN_IF_ERROR(add("attn_k.bias", {kv}));
      VRAMFIT_RETURN_IF_ERROR(add("attn_v.bias", {kv}));
    }
    if (a.o_bias) VRAMFIT_RETURN_IF_ERROR(add("attn_output.bias", {h}));
    if (a.qk_norm) {
      // MiniMax-M2's norms span all heads (q_norm [heads x head_dim]), the others one head.
      VRAMFIT_RETURN_IF_ERROR(add("attn_q_norm.weight", {a.qk_norm_whole ? q : hd}));
      if (!a.kv_shared) {
        VRAMFIT_RETURN_IF_ERROR(add("attn_k_norm.weight", {a.qk_norm_whole ? kv : hd}));
      }
    }
  }
  if (s.per_layer_input_size > 0) {
    // Gemma 3n/4 per-layer inputs (llama.cpp's tensor map: inp_gate, proj, post_norm).
    const uint64_t ple = static_cast<uint64_t>(s.per_layer_input_size);
    VRAMFIT_RETURN_IF_ERROR(add("inp_gate.weight", {ple, h}));
    VRAMFIT_RETURN_IF_ERROR(add("proj.weight", {h, ple}));
    VRAMFIT_RETURN_IF_ERROR(add("post_norm.weight", {h}));
  }
  if (s.family == "gemma4") VRAMFIT_RETURN_IF_ERROR(add("layer_output_scale.weight", {1}));
  if (a.sinks) {
    VRAMFIT_RETURN_IF_ERROR(add("attn_sinks.weight", {static_cast<uint64_t>(a.num_heads)}));
  }
  if (s.naming.gemma_norms) {
    VRAMFIT_RETURN_IF_ERROR(add("post_attention_norm.weight", {h}));
    VRAMFIT_RETURN_IF_ERROR(add("post_ffw_norm.weight", {h}));
  }
  // gpt-oss, GLM4_MOE and the hybrids name the norm before the FFN ATTN_POST_NORM
  // (constants.py).
  VRAMFIT_RETURN_IF_ERROR(add(s.family == "gpt_oss" || s.family == "glm4_moe" || hybrid
                                  ? "post_attention_norm.weight"
                                  : "ffn_norm.weight",
                              {h}));
  // Gemma 4's dense FFN runs beside its experts as llama.cpp's plain ffn_* tensors ("for
  // expert layers, we use normal FFN as shared expert", models/gemma4.cpp).
  const bool dense_beside = m.kind == MlpKind::kMoe && s.family == "gemma4";
  if (m.kind == MlpKind::kDense || dense_beside) {
    const uint64_t ff =
        static_cast<uint64_t>(dense_beside ? m.shared_intermediate_size : m.intermediate_size);
    VRAMFIT_RETURN_IF_ERROR(add("ffn_gate.weight", {ff, h}));
    VRAMFIT_RETURN_IF_ERROR(add("ffn_up.weight", {ff, h}));
    VRAMFIT_RETURN_IF_ERROR(add("ffn_down.weight", {h, ff}));
    if (!dense_beside) return Status::Ok();
  }
  const uint64_t e = static_cast<uint64_t>(m.num_experts);
  const uint64_t ffe = static_cast<uint64_t>(m.expert_intermediate_size);
  VRAMFIT_RETURN_IF_ERROR(add("ffn_gate_inp.weight", {e, h}));
  if (m.router_bias) VRAMFIT_RETURN_IF_ERROR(add("ffn_gate_inp.bias", {e}));
  // The router's score-correction bias (e_score_correction_bias -> FFN_EXP_PROBS_B).
  if (m.router_score_bias) VRAMFIT_RETURN_IF_ERROR(add("exp_probs_b.bias", {e}));
  const Dtype experts = mxfp4_experts ? Dtype::kMXFP4 : Dtype::kBool;
  VRAMFIT_RETURN_IF_ERROR(AddConverted(w, p + "ffn_gate_exps.weight", {e, ffe, h}, experts));
  VRAMFIT_RETURN_IF_ERROR(AddConverted(w, p + "ffn_up_exps.weight", {e, ffe, h}, experts));
  VRAMFIT_RETURN_IF_ERROR(AddConverted(w, p + "ffn_down_exps.weight", {e, h, ffe}, experts));
  if (m.bias) {
    VRAMFIT_RETURN_IF_ERROR(add("ffn_gate_exps.bias", {e, ffe}));
    VRAMFIT_RETURN_IF_ERROR(add("ffn_up_exps.bias", {e, ffe}));
    VRAMFIT_RETURN_IF_ERROR(add("ffn_down_exps.bias", {e, h}));
  }
  if (m.shared_intermediate_size > 0 && !dense_beside) {
    const uint64_t sf = static_cast<uint64_t>(m.shared_intermediate_size);
    if (m.shared_expert_gate) VRAMFIT_RETURN_IF_ERROR(add("ffn_gate_inp_shexp.weight", {h}));
    VRAMFIT_RETURN_IF_ERROR(add("ffn_gate_shexp.weight", {sf, h}));
    VRAMFIT_RETURN_IF_ERROR(add("ffn_up_shexp.weight", {sf, h}));
    VRAMFIT_RETURN_IF_ERROR(add("ffn_down_shexp.weight", {h, sf}));
  }
  return Status::Ok();
}

GgufValue Int(int64_t v) {
  GgufValue x;
  x.type = GgufType::kU32;
  x.u = static_cast<uint64_t>(v);
  x.i = v;
  return x;
}
GgufValue Str(std::string v) {
  GgufValue x;
  x.type = GgufType::kString;
  x.str = std::move(v);
  return x;
}
GgufValue IntArray(std::vector<int64_t> v) {
  GgufValue x;
  x.type = GgufType::kArray;
  x.array_type = GgufType::kI32;
  x.array_count = v.size();
  x.ints = std::move(v);
  return x;
}

// The keys llama-model.cpp load_hparams reads, as the converter writes them (gguf-py
// constants.py Keys.LLM / Keys.Attention), per layer where layers differ.
void Metadata(const ModelSpec& s, std::string_view arch, const GgufFtypeInfo& ft,
              GgufFile* f) {
  const std::string a(arch);
  auto& md = f->metadata;
  md["general.architecture"] = Str(a);
  md["general.file_type"] = Int(ft.llama_ftype);
  md["general.quantization_version"] = Int(2);
  const size_t n = s.layers.size();
  const int64_t nextn = WritesNextnBlocks(s) ? s.mtp_layers : 0;
  md[a + ".block_count"] = Int(static_cast<int64_t>(n) + nextn);
  md[a + ".embedding_length"] = Int(s.hidden_size);
  md[a + ".vocab_size"] = Int(s.vocab_size);
  if (s.max_position_embeddings > 0) md[a + ".context_length"] = Int(s.max_position_embeddings);
  std::vector<int64_t> heads, kv, ff;
  std::vector<int64_t> sliding;
  int64_t window = 0;
  const LayerSpec* moe = nullptr;
  // A hybrid's head counts and sizes are its full-attention layers' (the converter writes
  // num_attention_heads and num_key_value_heads as scalars).
  const AttentionSpec* full = nullptr;
  for (const LayerSpec& l : s.layers) {
    if (full == nullptr && l.attention.kind != AttentionKind::kLinear) full = &l.attention;
  }
  for (const LayerSpec& l : s.layers) {
    const AttentionSpec& la = l.attention.kind == AttentionKind::kLinear && full != nullptr
                                  ? *full
                                  : l.attention;
    heads.push_back(la.num_heads);
    kv.push_back(la.num_kv_heads);
    // Gemma 4's MoE layers keep their dense FFN (carried as the shared expert).
    ff.push_back(l.mlp.kind == MlpKind::kMoe && s.family == "gemma4"
                     ? l.mlp.shared_intermediate_size
                     : l.mlp.intermediate_size);
    const bool slides = l.attention.kind == AttentionKind::kSliding;
    sliding.push_back(slides ? 1 : 0);
    if (slides) window = std::max(window, l.attention.sliding_window);
    if (l.mlp.kind == MlpKind::kMoe && moe == nullptr) moe = &l;
  }
  // Per-layer arrays cover the NextN blocks too (the MTP layer repeats the last one).
  for (int64_t k = 0; k < nextn; ++k) {
    heads.push_back(heads.back());
    kv.push_back(kv.back());
    ff.push_back(ff.back());
    sliding.push_back(0);
  }
  auto scalar_or_array = [&](const std::string& key, const std::vector<int64_t>& v) {
    if (std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == v.front(); })) {
      md[key] = Int(v.front());
    } else {
      md[key] = IntArray(v);
    }
  };
  scalar_or_array(a + ".attention.head_count", heads);
  scalar_or_array(a + ".attention.head_count_kv", kv);
  scalar_or_array(a + ".feed_forward_length", ff);
  const AttentionSpec& a0 = full != nullptr ? *full : s.layers.front().attention;
  const int64_t hd = a0.head_dim > 0 ? a0.head_dim : s.hidden_size / a0.num_heads;
  if (IsHybridFamily(s.family)) {
    // Qwen3NextModel.set_gguf_parameters: the Gated DeltaNet sizes as the ssm.* keys, and
    // the full-attention period.
    const AttentionSpec* lin = nullptr;
    for (const LayerSpec& l : s.layers) {
      if (lin == nullptr && l.attention.kind == AttentionKind::kLinear) lin = &l.attention;
    }
    if (lin != nullptr) {
      md[a + ".ssm.conv_kernel"] = Int(lin->linear_conv_kernel_dim);
      md[a + ".ssm.state_size"] = Int(lin->linear_key_head_dim);
      md[a + ".ssm.group_count"] = Int(lin->linear_num_key_heads);
      md[a + ".ssm.time_step_rank"] = Int(lin->linear_num_value_heads);
      md[a + ".ssm.inner_size"] =
          Int(lin->linear_value_head_dim * lin->linear_num_value_heads);
      md[a + ".full_attention_interval"] = Int(FullAttentionInterval(s));
    }
  }
  md[a + ".attention.key_length"] = Int(hd);
  md[a + ".attention.value_length"] = Int(hd);
  if (a0.kind == AttentionKind::kMla) {
    // DeepseekV2Model: MLA as MQA over the latent (one KV head of kv_lora_rank + the rope
    // part, values kv_lora_rank wide), the per-head sizes as the *_mla lengths.
    md[a + ".attention.head_count_kv"] = Int(1);
    md[a + ".attention.key_length"] = Int(a0.kv_lora_rank + a0.qk_rope_head_dim);
    md[a + ".attention.value_length"] = Int(a0.kv_lora_rank);
    md[a + ".attention.key_length_mla"] = Int(a0.qk_nope_head_dim + a0.qk_rope_head_dim);
    md[a + ".attention.value_length_mla"] = Int(a0.v_head_dim);
    md[a + ".attention.kv_lora_rank"] = Int(a0.kv_lora_rank);
    if (a0.q_lora_rank > 0) md[a + ".attention.q_lora_rank"] = Int(a0.q_lora_rank);
    md[a + ".rope.dimension_count"] = Int(a0.qk_rope_head_dim);
  }
  if (s.family == "gemma4") {
    // The converter writes the full layers' head size as key_length and the sliding ones' as
    // key_length_swa, and the KV-shared tail as shared_kv_layers.
    int64_t full = hd, swa = hd, shared = 0;
    for (const LayerSpec& l : s.layers) {
      if (l.attention.kind == AttentionKind::kFull) full = l.attention.head_dim;
      if (l.attention.kind == AttentionKind::kSliding) swa = l.attention.head_dim;
      shared += l.attention.kv_shared ? 1 : 0;
    }
    md[a + ".attention.key_length"] = Int(full);
    md[a + ".attention.value_length"] = Int(full);
    md[a + ".attention.key_length_swa"] = Int(swa);
    md[a + ".attention.value_length_swa"] = Int(swa);
    if (shared > 0) md[a + ".attention.shared_kv_layers"] = Int(shared);
  }
  if (window > 0) {
    md[a + ".attention.sliding_window"] = Int(window);
    md[a + ".attention.sliding_window_pattern"] = IntArray(sliding);
  }
  if (nextn > 0) md[a + ".nextn_predict_layers"] = Int(nextn);
  if (moe != nullptr) {
    // The dense layers before the first MoE one (DeepSeek/GLM's first_k_dense_replace).
    int64_t lead = 0;
    while (lead < static_cast<int64_t>(n) &&
           s.layers[static_cast<size_t>(lead)].mlp.kind != MlpKind::kMoe) {
      ++lead;
    }
    if (lead > 0) md[a + ".leading_dense_block_count"] = Int(lead);
    if (moe->mlp.num_shared_experts > 0 && (s.family == "glm4_moe" || arch == "deepseek2")) {
      md[a + ".expert_shared_count"] = Int(moe->mlp.num_shared_experts);
    }
    md[a + ".expert_count"] = Int(moe->mlp.num_experts);
    md[a + ".expert_used_count"] = Int(moe->mlp.experts_per_token);
    md[a + ".expert_feed_forward_length"] = Int(moe->mlp.expert_intermediate_size);
    if (moe->mlp.shared_intermediate_size > 0) {
      md[a + ".expert_shared_feed_forward_length"] = Int(moe->mlp.shared_intermediate_size);
    }
  }
  if (!s.rope_scaling.type.empty() && s.rope_scaling.factor > 0) {
    md[a + ".rope.scaling.type"] = Str(s.rope_scaling.type);
    GgufValue fv;
    fv.type = GgufType::kF32;
    fv.f = s.rope_scaling.factor;
    md[a + ".rope.scaling.factor"] = fv;
    if (s.rope_scaling.original_max_position_embeddings > 0) {
      md[a + ".rope.scaling.original_context_length"] =
          Int(s.rope_scaling.original_max_position_embeddings);
    }
  }
}

}  // namespace

const GgufFtypeInfo* FindGgufFtype(std::string_view word) {
  std::string w(word);
  for (char& c : w) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (const GgufFtypeInfo& f : kFtypes) {
    if (w == f.name) return &f;
  }
  return nullptr;
}

std::string GgufFtypeWords() {
  std::string out;
  for (const GgufFtypeInfo& f : kFtypes) {
    out += (out.empty() ? "" : ", ") + core::AsciiLower(f.name);
  }
  return out;
}

Dtype GgufTensorType(const GgufQuantModel& m, GgufFtype ft, std::string_view name,
                     const Shape& shape, Dtype converted) {
  const GgufFtypeInfo* info = nullptr;
  for (const GgufFtypeInfo& f : kFtypes) {
    if (f.ftype == ft) info = &f;
  }
  // The converter's MXFP4 output is not re-quantized.
  if (info == nullptr || ft == GgufFtype::kMxfp4) return converted;
  if (!AllowsQuantization(name, shape)) return converted;
  // F16 / BF16: every quantizable tensor in that type (no per-tensor mix: the type is not a
  // quantized one).
  if (!IsQuantized(info->base)) return info->base;
  return Fallback(shape, Mix(m, ft, name, shape, info->base));
}

Result<GgufFile> SynthesizeGguf(const ModelSpec& base, GgufFtype ft, std::string origin) {
  const GgufFtypeInfo* info = nullptr;
  for (const GgufFtypeInfo& f : kFtypes) {
    if (f.ftype == ft) info = &f;
  }
  if (info == nullptr) return Status::InvalidArgument("not a modelled GGUF file type");
  std::string_view arch;
  for (const ArchOf& r : kArchOf) {
    if (r.family == base.family) arch = r.arch;
  }
  const bool hybrid = IsHybridFamily(base.family);
  const int64_t interval = hybrid ? FullAttentionInterval(base) : 0;
  bool unsupported_layer = hybrid && interval == 0;
  for (const LayerSpec& l : base.layers) {
    const AttentionSpec& a = l.attention;
    if (a.kind == AttentionKind::kLinear) {
      unsupported_layer |= !hybrid || a.mamba2 || a.linear_num_value_heads <= 0 ||
                           a.linear_num_key_heads <= 0 || a.linear_key_head_dim <= 0 ||
                           a.linear_value_head_dim <= 0 || a.linear_conv_kernel_dim <= 0;
      continue;
    }
    unsupported_layer |= (a.kind == AttentionKind::kMla && arch != "deepseek2") ||
                         a.num_heads <= 0;
  }
  if (arch.empty() || unsupported_layer || base.layers.empty() || base.hidden_size <= 0 ||
      base.vocab_size <= 0) {
    return Status::Unsupported(fmt::format(
        "--as-quantized {}: GGUF what-ifs lay out llama, mistral, mixtral, qwen2, qwen2_moe, "
        "qwen3, qwen3_moe, qwen3_next, qwen3_5, qwen3_5_moe, Qwen2/2.5/3-VL (text), gemma2, "
        "gemma3, gemma4, gpt-oss, phi3, glm4_moe, minimax_m2 and DeepSeek-V2/V3 (and Kimi-K2) "
        "models; this one is {} (plan a real .gguf file instead)",
        info->name, base.family.empty() ? "unknown" : base.family));
  }
  const bool mxfp4_source = base.quant.method == QuantMethod::kMxfp4;
  // The converter dequantizes an FP8 checkpoint (ModelBase.dequant_model, quant_method "fp8":
  // weight x weight_scale_inv per block) and writes the float model: DeepSeek-V3/R1, Kimi-K2,
  // Qwen's FP8 releases convert as their 16-bit originals do.
  const bool fp8_source = base.quant.method == QuantMethod::kFp8;
  if (base.quant.quantized() && !mxfp4_source && !fp8_source) {
    return Status::InvalidArgument(fmt::format(
        "--as-quantized {}: the checkpoint is already quantized ({}); llama.cpp's converter "
        "reads the unquantized model", info->name, QuantMethodName(base.quant.method)));
  }
  const bool moe = base.CountMoeLayers() > 0;
  if ((ft == GgufFtype::kMxfp4 || ft == GgufFtype::kMxfp4Moe) && !moe) {
    return Status::Unsupported(fmt::format(
        "--as-quantized {}: MXFP4 types quantize MoE experts, and this model has none",
        info->name));
  }
  if (ft == GgufFtype::kMxfp4 && !mxfp4_source) {
    return Status::Unsupported(
        "--as-quantized mxfp4: the converter keeps MXFP4 experts only where the checkpoint "
        "ships them (gpt-oss); use mxfp4_moe for llama-quantize's MXFP4_MOE");
  }
  GgufFile f;
  f.origin = std::move(origin);
  f.version = 3;
  f.alignment = kAlignment;
  Metadata(base, arch, *info, &f);
  // The converter's float type: F16 or BF16 as asked, else the checkpoint's (llama.cpp's
  // quantizer reads either the same way).
  Dtype float_type = base.dtype == Dtype::kF16 ? Dtype::kF16 : Dtype::kBF16;
  if (ft == GgufFtype::kF16) float_type = Dtype::kF16;
  if (ft == GgufFtype::kBF16) float_type = Dtype::kBF16;
  Writer w{&f, float_type};
  const uint64_t h = static_cast<uint64_t>(base.hidden_size);
  const uint64_t vocab = static_cast<uint64_t>(base.vocab_size);
  VRAMFIT_RETURN_IF_ERROR(AddConverted(w, "token_embd.weight", {vocab, h}));
  if (base.per_layer_input_size > 0) {
    const uint64_t width =
        static_cast<uint64_t>(base.per_layer_input_size) * base.layers.size();
    VRAMFIT_RETURN_IF_ERROR(AddConverted(
        w, "per_layer_token_embd.weight",
        {static_cast<uint64_t>(base.per_layer_vocab_size), width}));
    VRAMFIT_RETURN_IF_ERROR(AddConverted(w, "per_layer_model_proj.weight", {width, h}));
    VRAMFIT_RETURN_IF_ERROR(AddConverted(
        w, "per_layer_proj_norm.weight", {static_cast<uint64_t>(base.per_layer_input_size)}));
  }
  for (size_t il = 0; il < base.layers.size(); ++il) {
    VRAMFIT_RETURN_IF_ERROR(LayerTensors(w, base, base.layers[il], il, mxfp4_source));
  }
  if (WritesNextnBlocks(base)) {
    // Each NextN block: the checkpoint's layer num_hidden_layers + k mapped whole (tensor
    // names as any layer's), then eh_proj, enorm, hnorm, embed_tokens, shared_head.head and
    // shared_head.norm as blk.N.nextn.* (tensor_mapping.py NEXTN_*).
    const LayerSpec mtp = MtpLayer(base);
    for (int64_t k = 0; k < base.mtp_layers; ++k) {
      const size_t il = base.layers.size() + static_cast<size_t>(k);
      VRAMFIT_RETURN_IF_ERROR(LayerTensors(w, base, mtp, il, mxfp4_source));
      const std::string p = fmt::format("blk.{}.nextn.", il);
      VRAMFIT_RETURN_IF_ERROR(AddConverted(w, p + "eh_proj.weight", {h, 2 * h}));
      VRAMFIT_RETURN_IF_ERROR(AddConverted(w, p + "enorm.weight", {h}));
      VRAMFIT_RETURN_IF_ERROR(AddConverted(w, p + "hnorm.weight", {h}));
      VRAMFIT_RETURN_IF_ERROR(AddConverted(w, p + "embed_tokens.weight", {vocab, h}));
      VRAMFIT_RETURN_IF_ERROR(AddConverted(w, p + "shared_head_head.weight", {vocab, h}));
      VRAMFIT_RETURN_IF_ERROR(AddConverted(w, p + "shared_head_norm.weight", {h}));
    }
  }
  VRAMFIT_RETURN_IF_ERROR(AddConverted(w, "output_norm.weight", {h}));
  if (!base.tie_word_embeddings) {
    VRAMFIT_RETURN_IF_ERROR(AddConverted(w, "output.weight", {vocab, h}));
  }
  // llama-quantize over the converted tensors, in file order; offsets laid out anew.
  GgufQuantModel qm;
  qm.arch = std::string(arch);
  // hparams.n_layer: block_count, the NextN blocks included.
  qm.n_layer = static_cast<int64_t>(base.layers.size()) +
               (WritesNextnBlocks(base) ? base.mtp_layers : 0);
  qm.n_expert = moe ? base.layers.back().mlp.num_experts : 0;
  for (const LayerSpec& l : base.layers) qm.n_expert = std::max(qm.n_expert, l.mlp.num_experts);
  qm.tied = base.tie_word_embeddings;
  // LLM_ARCH_QWEN2VL falls through to QWEN2's sizes in load_hparams.
  qm.type_70b =
      (arch == "llama" || arch == "qwen2" || arch == "qwen2vl") && qm.n_layer == 80 && !moe;
  qm.full_attention_interval = interval;
  TensorList converted = std::move(f.tensors);
  f.tensors.clear();
  Writer q{&f, float_type};
  for (TensorInfo& t : converted) {
    const Dtype type = GgufTensorType(qm, ft, t.name, t.shape, t.dtype);
    VRAMFIT_RETURN_IF_ERROR(Add(q, std::move(t.name), std::move(t.shape), type));
  }
  // The header (metadata, the vocabulary, the tensor infos) is not synthesized: a few MB
  // that llama.cpp never loads onto a GPU.
  f.data_bytes = q.offset;
  f.file_size = q.offset;
  return f;
}

Result<GgufFile> SynthesizeMmproj(const ModelSpec& base, uint64_t tower_bytes,
                                  std::string origin) {
  const VisionSpec& v = base.vision;
  // The converters' projector types (gguf-py constants.py VisionProjectorType): Qwen2VLModel's
  // mmproj writes QWEN2VL or QWEN25VL by the tower, Qwen3VLVisionModel QWEN3VL (also for
  // Qwen3.5/3.6, conversion/__init__.py), Gemma3VisionModel GEMMA3.
  std::string type;
  switch (v.kind) {
    case VisionKind::kQwen2Vl: type = "qwen2vl_merger"; break;
    case VisionKind::kQwen25Vl: type = "qwen2.5vl_merger"; break;
    case VisionKind::kQwen3Vl: type = "qwen3vl_merger"; break;
    case VisionKind::kSiglip: type = base.family == "gemma3" ? "gemma3" : ""; break;
    default: break;
  }
  if (type.empty() || v.hidden_size <= 0 || v.num_heads <= 0 || v.intermediate_size <= 0 ||
      v.depth <= 0 || v.patch_size <= 0 || tower_bytes == 0) {
    return Status::Unsupported("a vision tower whose llama.cpp projector is not laid out");
  }
  GgufFile f;
  f.origin = std::move(origin);
  f.version = 3;
  f.alignment = kAlignment;
  auto& md = f.metadata;
  md["general.architecture"] = Str("clip");
  GgufValue yes;
  yes.type = GgufType::kBool;
  yes.u = 1;
  md["clip.has_vision_encoder"] = yes;
  md["clip.projector_type"] = Str(type);
  md["clip.vision.embedding_length"] = Int(v.hidden_size);
  md["clip.vision.attention.head_count"] = Int(v.num_heads);
  md["clip.vision.feed_forward_length"] = Int(v.intermediate_size);
  md["clip.vision.block_count"] = Int(v.depth);
  md["clip.vision.patch_size"] = Int(v.patch_size);
  // The Qwen towers take any size (the warm-up image is fixed by clip.cpp); a square of 32
  // patches stands for the image size they do not have.
  md["clip.vision.image_size"] = Int(v.image_size > 0 ? v.image_size : 32 * v.patch_size);
  if (type == "gemma3") {
    md["clip.vision.projector.scale_factor"] = Int(4);
  } else {
    md["clip.vision.spatial_merge_size"] = Int(std::max<int64_t>(v.spatial_merge_size, 1));
  }
  f.data_bytes = tower_bytes;
  f.file_size = tower_bytes;
  return f;
}

}  // namespace vramfit
