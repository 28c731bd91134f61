// SynthesizeTensors: the tensor list a checkpoint of a ModelSpec holds, name for name, as
// the family's transformers model names its parameters and as the declared quantization
// method lays out each linear (docs/formats/quantized.md). Used for config-only
// directories and catalog ids, and checked in tests against checkpoints written
// independently.
#include <fmt/format.h>

#include "core/checked.h"
#include "model/auto_round.h"
#include "vramfit/inventory.h"

namespace vramfit {
namespace {

using core::CeilDiv;

class Emitter {
 public:
  // `store`: keep the tensors; otherwise only count their bytes.
  Emitter(const ModelSpec& spec, bool store) : spec_(spec), q_(spec.quant), store_(store) {}

  void Add(const std::string& name, Dtype dtype, Shape shape) {
    if (!store_) {
      uint64_t n = 1, bits = 0;
      for (uint64_t d : shape) overflow_ |= !core::CheckedMul(n, d, &n);
      overflow_ |= !core::CheckedMul(n, static_cast<uint64_t>(DtypeBits(dtype)), &bits);
      overflow_ |= !core::CheckedAdd(offset_, CeilDiv(bits, 8), &offset_);
      return;
    }
    TensorInfo t;
    t.name = name;
    t.dtype = dtype;
    uint64_t n = 1;
    for (uint64_t d : shape) overflow_ |= !core::CheckedMul(n, d, &n);
    t.elements = n;
    uint64_t bits = 0;
    overflow_ |= !core::CheckedMul(n, static_cast<uint64_t>(DtypeBits(dtype)), &bits);
    t.shape = std::move(shape);
    t.begin = offset_;
    overflow_ |= !core::CheckedAdd(offset_, CeilDiv(bits, 8), &t.end);
    offset_ = t.end;
    out_.tensors.push_back(std::move(t));
  }
  // Tensor `module` + `suffix`: the name is made only when the tensors are kept.
  void Add(const std::string& module, std::string_view suffix, Dtype dtype, Shape shape) {
    if (!store_) return Add(std::string(), dtype, std::move(shape));
    std::string name;
    name.reserve(module.size() + suffix.size());
    name.append(module).append(suffix);
    Add(name, dtype, std::move(shape));
  }
  void Plain(const std::string& name, Shape shape) { Add(name, spec_.dtype, std::move(shape)); }

  // A linear layer `module` with out_features n and in_features k.
  void Linear(const std::string& module, uint64_t n, uint64_t k, bool bias, bool quantize) {
    const Dtype d = spec_.dtype;
    if (!quantize) {
      Add(module, ".weight", d, {n, k});
      if (bias) Add(module, ".bias", d, {n});
      return;
    }
    const uint64_t b = static_cast<uint64_t>(BitsFor(module));
    const uint64_t g = q_.group_size > 0 ? static_cast<uint64_t>(q_.group_size) : k;
    const Dtype bias_dtype = d;
    switch (q_.layout) {
      case QuantLayout::kNone:
        Add(module, ".weight", d, {n, k});
        break;
      case QuantLayout::kAwqGemm:
        // A width that is not a multiple of the group ends in a shorter group (ceil rows).
        Add(module, ".qweight", Dtype::kI32, {k, n * b / 32});
        Add(module, ".qzeros", Dtype::kI32, {CeilDiv(k, g), n * b / 32});
        Add(module, ".scales", Dtype::kF16, {CeilDiv(k, g), n});
        break;
      case QuantLayout::kAwqGemv: {
        const uint64_t w = AwqZerosWidth(k, g);
        Add(module, ".qweight", Dtype::kI32, {n, k * b / 32});
        Add(module, ".qzeros", Dtype::kI32, {n, w});
        Add(module, ".scales", Dtype::kF16, {n, 8 * w});
        break;
      }
      case QuantLayout::kAwqGemvFast: {
        const uint64_t w = AwqZerosWidth(k, g);
        Add(module, ".qweight", Dtype::kI16, {n / 4, k});
        Add(module, ".scales", Dtype::kF16, {8 * w, n});
        Add(module, ".qzeros", Dtype::kF16, {8 * w, n});
        break;
      }
      case QuantLayout::kAwqMarlin:
        Add(module, ".qweight", Dtype::kI32, {k / 16, 2 * n});
        Add(module, ".scales", Dtype::kF16, {k / g, n});
        break;
      case QuantLayout::kGptq:
        Add(module, ".qweight", Dtype::kI32, {k * b / 32, n});
        Add(module, ".qzeros", Dtype::kI32, {CeilDiv(k, g), n * b / 32});
        Add(module, ".scales", Dtype::kF16, {CeilDiv(k, g), n});
        Add(module, ".g_idx", Dtype::kI32, {k});
        break;
      case QuantLayout::kCtPacked:
        Add(module, ".weight_packed", Dtype::kI32, {n, CeilDiv(k * b, 32)});
        Add(module, ".weight_scale", d, {n, q_.group_size > 0 ? CeilDiv(k, g) : 1});
        Add(module, ".weight_shape", Dtype::kI64, {2});
        if (!q_.symmetric) {
          Add(module, ".weight_zero_point", Dtype::kI32,
              {CeilDiv(n * b, 32), q_.group_size > 0 ? CeilDiv(k, g) : 1});
        }
        if (q_.act_order) Add(module, ".weight_g_idx", Dtype::kI32, {k});
        break;
      case QuantLayout::kCtInt8:
      case QuantLayout::kCtFp8:
        Add(module, ".weight", q_.layout == QuantLayout::kCtInt8 ? Dtype::kI8 : Dtype::kF8_E4M3,
            {n, k});
        if (q_.strategy == "block" && q_.block_size.size() == 2) {
          Add(module, ".weight_scale", d,
              {CeilDiv(n, q_.block_size[0]), CeilDiv(k, q_.block_size[1])});
        } else if (q_.strategy == "tensor") {
          Add(module, ".weight_scale", d, {1});
        } else {
          Add(module, ".weight_scale", d, {n, 1});
        }
        if (q_.static_input_scale) Add(module, ".input_scale", d, {1});
        break;
      case QuantLayout::kCtNvfp4:
        Add(module, ".weight_packed", Dtype::kU8, {n, k / 2});
        Add(module, ".weight_scale", Dtype::kF8_E4M3, {n, k / 16});
        Add(module, ".weight_global_scale", Dtype::kF32, {1});
        // NVFP4 activations (W4A4) keep a static global scale even with "dynamic": "local".
        if (q_.quantized_activations) Add(module, ".input_global_scale", Dtype::kF32, {1});
        break;
      case QuantLayout::kCtMxfp4:
        Add(module, ".weight_packed", Dtype::kU8, {n, k / 2});
        Add(module, ".weight_scale", Dtype::kU8, {n, k / 32});
        break;
      case QuantLayout::kModelOptNvfp4:
        Add(module, ".weight", Dtype::kU8, {n, k / 2});
        Add(module, ".weight_scale", Dtype::kF8_E4M3, {n, CeilDiv(k, g)});
        Add(module, ".weight_scale_2", Dtype::kF32, {});
        if (q_.quantized_activations) Add(module, ".input_scale", Dtype::kF32, {});
        break;
      case QuantLayout::kFp8Block: {
        const uint64_t bn = q_.block_size.size() == 2 ? q_.block_size[0] : 128;
        const uint64_t bk = q_.block_size.size() == 2 ? q_.block_size[1] : 128;
        Add(module, ".weight", Dtype::kF8_E4M3, {n, k});
        Add(module, ".weight_scale_inv", Dtype::kF32, {CeilDiv(n, bn), CeilDiv(k, bk)});
        break;
      }
      case QuantLayout::kFp8Tensor:
        Add(module, ".weight", Dtype::kF8_E4M3, {n, k});
        Add(module, ".weight_scale", Dtype::kF32, {});
        if (q_.static_input_scale) Add(module, ".input_scale", Dtype::kF32, {});
        break;
      case QuantLayout::kMxfp4Blocks:
        Add(module, ".weight", d, {n, k});  // only experts are MXFP4 (see Experts below)
        break;
      case QuantLayout::kBnb4: {
        const uint64_t e = n * k;
        const uint64_t blocks = CeilDiv(e, 64);
        Add(module, ".weight", Dtype::kU8, {CeilDiv(e, 2), 1});
        if (q_.bnb_double_quant) {
          Add(module, ".weight.absmax", Dtype::kU8, {blocks});
          Add(module, ".weight.nested_absmax", Dtype::kF32, {CeilDiv(blocks, 256)});
          Add(module, ".weight.nested_quant_map", Dtype::kF32, {256});
        } else {
          Add(module, ".weight.absmax", Dtype::kF32, {blocks});
        }
        Add(module, ".weight.quant_map", Dtype::kF32, {16});
        break;
      }
      case QuantLayout::kBnb8:
        Add(module, ".weight", Dtype::kI8, {n, k});
        Add(module, ".SCB", Dtype::kF32, {n});
        break;
    }
    if (bias) Add(module, ".bias", IsAwqOrGptq() ? Dtype::kF16 : bias_dtype, {n});
  }

  bool IsAwqOrGptq() const {
    return q_.method == QuantMethod::kAwq || q_.method == QuantMethod::kGptq;
  }

  // Whether a decoder projection is stored quantized.
  bool Quantize(const std::string& module) const {
    if (q_.layout == QuantLayout::kMxfp4Blocks) return false;
    return QuantSchemeCovers(q_, module);
  }

  int BitsFor(const std::string& module) const { return QuantSchemeBits(q_, module); }

  static uint64_t AwqZerosWidth(uint64_t k, uint64_t g) {
    // AutoAWQ calculate_zeros_width: ceil((K/G)/8) rounded up to a multiple of m.
    const uint64_t m = g >= 128 ? 1 : g == 64 ? 2 : g == 32 ? 4 : 1;
    const uint64_t w = CeilDiv(CeilDiv(k, g), 8);
    return CeilDiv(w, m) * m;
  }

  FileTensors Finish(bool* overflow) {
    *overflow = overflow_;
    return std::move(out_);
  }

 private:
  const ModelSpec& spec_;
  const QuantScheme& q_;
  FileTensors out_;
  uint64_t offset_ = 0;
  bool overflow_ = false;
  bool store_ = true;

 public:
  uint64_t bytes() const { return offset_; }
};

void Mlp(Emitter& e, const ModelSpec& s, const std::string& p, const MlpSpec& m, bool quant_ok) {
  const uint64_t h = s.hidden_size;
  const NamingSpec& nm = s.naming;
  auto proj3 = [&](const std::string& base, uint64_t inter, bool bias, bool mixtral) {
    const std::string g = base + (mixtral ? "w1" : "gate_proj");
    const std::string u = base + (mixtral ? "w3" : "up_proj");
    const std::string d = base + (mixtral ? "w2" : "down_proj");
    e.Linear(g, inter, h, bias, quant_ok && e.Quantize(g));
    e.Linear(u, inter, h, bias, quant_ok && e.Quantize(u));
    e.Linear(d, h, inter, bias, quant_ok && e.Quantize(d));
  };
  if (m.kind == MlpKind::kDense) {
    proj3(p + nm.mlp, m.intermediate_size, m.bias, false);
    return;
  }
  if (s.family == "gemma4") {
    // Gemma4TextDecoderLayer with enable_moe_block: the dense mlp, a router (proj, scale,
    // per_expert_scale) and fused experts (gate_up_proj [E, 2I, H], down_proj [E, H, I]),
    // with three more norms.
    const uint64_t ne = m.num_experts, ie = m.expert_intermediate_size;
    proj3(p + nm.mlp, m.shared_intermediate_size, false, false);
    e.Linear(p + "router.proj", ne, h, false, false);
    e.Plain(p + "router.scale", {h});
    e.Plain(p + "router.per_expert_scale", {ne});
    if (s.quant.quantized() && quant_ok) {
      // Quantizers write the experts one linear each (experts.E.gate_proj ...), the names
      // vLLM's FusedMoE expert mapping loads.
      for (uint64_t x = 0; x < ne; ++x) proj3(fmt::format("{}experts.{}.", p, x), ie, false, false);
    } else {
      e.Add(p + "experts.gate_up_proj", s.dtype, {ne, 2 * ie, h});
      e.Add(p + "experts.down_proj", s.dtype, {ne, h, ie});
    }
    for (const char* n : {"post_feedforward_layernorm_1", "pre_feedforward_layernorm_2",
                          "post_feedforward_layernorm_2"})
      e.Plain(p + n + ".weight", {h});
    return;
  }
  const std::string moe = p + nm.moe;
  const uint64_t ne = m.num_experts, ie = m.expert_intermediate_size;
  const std::string router = moe + nm.router;
  const bool ct = s.quant.method == QuantMethod::kCompressedTensors;
  e.Linear(router, ne, h, m.router_bias, quant_ok && ct && e.Quantize(router));
  if (m.router_score_bias) e.Add(router + ".e_score_correction_bias", Dtype::kF32, {ne});
  if (nm.fused_experts) {
    const std::string x = moe + nm.experts;
    if (s.quant.layout == QuantLayout::kMxfp4Blocks && quant_ok) {
      e.Add(x + "gate_up_proj_blocks", Dtype::kU8, {ne, 2 * ie, h / 32, 16});
      e.Add(x + "gate_up_proj_scales", Dtype::kU8, {ne, 2 * ie, h / 32});
      e.Add(x + "gate_up_proj_bias", s.dtype, {ne, 2 * ie});
      e.Add(x + "down_proj_blocks", Dtype::kU8, {ne, h, ie / 32, 16});
      e.Add(x + "down_proj_scales", Dtype::kU8, {ne, h, ie / 32});
      e.Add(x + "down_proj_bias", s.dtype, {ne, h});
    } else {
      // transformers' fused expert parameters (gpt-oss, Qwen3-VL-MoE): [E, H, 2I] and [E, I, H].
      e.Add(x + "gate_up_proj", s.dtype, {ne, h, 2 * ie});
      if (m.bias) e.Add(x + "gate_up_proj_bias", s.dtype, {ne, 2 * ie});
      e.Add(x + "down_proj", s.dtype, {ne, ie, h});
      if (m.bias) e.Add(x + "down_proj_bias", s.dtype, {ne, h});
    }
  } else {
    for (uint64_t x = 0; x < ne; ++x) {
      proj3(fmt::format("{}{}{}.", moe, nm.experts, x), ie, false, nm.mixtral_expert_names);
    }
  }
  if (m.num_shared_experts > 0) {
    proj3(moe + nm.shared, m.shared_intermediate_size, false, false);
    if (m.shared_expert_gate) {
      const std::string g = moe + "shared_expert_gate";
      e.Linear(g, 1, h, false, quant_ok && ct && e.Quantize(g));
    }
  }
}

void Attention(Emitter& e, const ModelSpec& s, const std::string& p, const AttentionSpec& a,
               bool quant_ok) {
  const uint64_t h = s.hidden_size;
  const std::string at = p + s.naming.attn;
  auto lin = [&](const std::string& name, uint64_t n, uint64_t k, bool bias) {
    e.Linear(name, n, k, bias, quant_ok && e.Quantize(name));
  };
  switch (a.kind) {
    case AttentionKind::kFull:
    case AttentionKind::kSliding: {
      const uint64_t q = a.num_heads * a.head_dim, kv = a.num_kv_heads * a.head_dim;
      lin(at + "q_proj", a.output_gate ? 2 * q : q, h, a.qkv_bias);
      // Gemma 4: a KV-shared layer has no k/v projections or k_norm; a K = V layer no v_proj.
      if (!a.kv_shared) {
        lin(at + "k_proj", kv, h, a.qkv_bias);
        if (!a.k_eq_v) lin(at + "v_proj", kv, h, a.qkv_bias);
      }
      lin(at + "o_proj", h, q, a.o_bias);
      if (a.qk_norm) {
        e.Plain(at + "q_norm.weight", {a.qk_norm_whole ? q : static_cast<uint64_t>(a.head_dim)});
        if (!a.kv_shared) {
          e.Plain(at + "k_norm.weight",
                  {a.qk_norm_whole ? kv : static_cast<uint64_t>(a.head_dim)});
        }
      }
      if (a.sinks) e.Plain(at + "sinks", {static_cast<uint64_t>(a.num_heads)});
      break;
    }
    case AttentionKind::kMla: {
      const uint64_t qk = a.qk_nope_head_dim + a.qk_rope_head_dim;
      if (a.q_lora_rank > 0) {
        lin(at + "q_a_proj", a.q_lora_rank, h, false);
        e.Plain(at + "q_a_layernorm.weight", {static_cast<uint64_t>(a.q_lora_rank)});
        lin(at + "q_b_proj", a.num_heads * qk, a.q_lora_rank, false);
      } else {
        lin(at + "q_proj", a.num_heads * qk, h, false);
      }
      lin(at + "kv_a_proj_with_mqa", a.kv_lora_rank + a.qk_rope_head_dim, h, false);
      e.Plain(at + "kv_a_layernorm.weight", {static_cast<uint64_t>(a.kv_lora_rank)});
      lin(at + "kv_b_proj", a.num_heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank,
          false);
      lin(at + "o_proj", h, a.num_heads * a.v_head_dim, false);
      break;
    }
    case AttentionKind::kLinear: {
      if (a.mamba2) {
        // MambaMixer2 (transformers GraniteMoeHybridMambaLayer, BambaMixer): in_proj makes z, x,
        // B, C and dt; the conv runs over x, B and C.
        const std::string m = p + "mamba.";
        const uint64_t inner = a.mamba_intermediate, heads = a.mamba_num_heads;
        const uint64_t conv_dim = inner + 2 * a.mamba_groups * a.mamba_state_size;
        lin(m + "in_proj", inner + conv_dim + heads, h, false);
        e.Plain(m + "conv1d.weight",
                {conv_dim, 1, static_cast<uint64_t>(a.linear_conv_kernel_dim)});
        e.Plain(m + "conv1d.bias", {conv_dim});
        e.Plain(m + "dt_bias", {heads});
        e.Plain(m + "A_log", {heads});
        e.Plain(m + "D", {heads});
        e.Plain(m + "norm.weight", {inner});
        lin(m + "out_proj", h, inner, false);
        break;
      }
      const std::string la = p + "linear_attn.";
      const uint64_t kh = a.linear_num_key_heads, vh = a.linear_num_value_heads;
      const uint64_t kd = a.linear_key_head_dim, vd = a.linear_value_head_dim;
      const uint64_t conv_dim = 2 * kh * kd + vh * vd;
      if (s.family == "qwen3_next") {
        lin(la + "in_proj_qkvz", 2 * kh * kd + 2 * vh * vd, h, false);
        lin(la + "in_proj_ba", 2 * vh, h, false);
      } else {  // Qwen3.5 / 3.6 split projections
        lin(la + "in_proj_qkv", conv_dim, h, false);
        lin(la + "in_proj_z", vh * vd, h, false);
        lin(la + "in_proj_b", vh, h, false);
        lin(la + "in_proj_a", vh, h, false);
      }
      e.Plain(la + "conv1d.weight", {conv_dim, 1, static_cast<uint64_t>(a.linear_conv_kernel_dim)});
      e.Plain(la + "dt_bias", {vh});
      e.Plain(la + "A_log", {vh});
      e.Plain(la + "norm.weight", {vd});
      lin(la + "out_proj", h, vh * vd, false);
      break;
    }
  }
}

void Layer(Emitter& e, const ModelSpec& s, const std::string& p, const LayerSpec& l,
           bool quant_ok) {
  const uint64_t h = s.hidden_size;
  e.Plain(p + "input_layernorm.weight", {h});
  Attention(e, s, p, l.attention, quant_ok);
  e.Plain(p + "post_attention_layernorm.weight", {h});
  if (s.naming.gemma_norms) {
    e.Plain(p + "pre_feedforward_layernorm.weight", {h});
    e.Plain(p + "post_feedforward_layernorm.weight", {h});
  }
  Mlp(e, s, p, l.mlp, quant_ok);
  if (s.family == "gemma4") {
    // Gemma4TextDecoderLayer: a scalar on the layer's output and, with per-layer embeddings,
    // the gate into and projection out of the per-layer input.
    e.Plain(p + "layer_scalar", {1});
    if (s.per_layer_input_size > 0) {
      const uint64_t ple = static_cast<uint64_t>(s.per_layer_input_size);
      const std::string g = p + "per_layer_input_gate", o = p + "per_layer_projection";
      e.Linear(g, ple, h, false, quant_ok && e.Quantize(g));
      e.Linear(o, h, ple, false, quant_ok && e.Quantize(o));
      e.Plain(p + "post_per_layer_input_norm.weight", {h});
    }
  }
}

void Vision(Emitter& e, const ModelSpec& s) {
  const VisionSpec& v = s.vision;
  const uint64_t hv = v.hidden_size, iv = v.intermediate_size,
                 m2 = v.spatial_merge_size * v.spatial_merge_size;
  const uint64_t c = v.in_channels, t = v.temporal_patch_size, ps = v.patch_size;
  const bool ct = s.quant.method == QuantMethod::kCompressedTensors;
  auto lin = [&](const std::string& name, uint64_t n, uint64_t k, bool bias) {
    e.Linear(name, n, k, bias, ct && e.Quantize(name));
  };
  const std::string p = s.naming.vision;
  switch (v.kind) {
    case VisionKind::kQwen25Vl:
      // transformers Qwen2_5_VisionTransformerPretrainedModel: RMSNorm, gated MLP, merger MLP.
      e.Plain(p + "patch_embed.proj.weight", {hv, c, t, ps, ps});
      for (int64_t i = 0; i < v.depth; ++i) {
        const std::string b = fmt::format("{}blocks.{}.", p, i);
        e.Plain(b + "norm1.weight", {hv});
        e.Plain(b + "norm2.weight", {hv});
        lin(b + "attn.qkv", 3 * hv, hv, true);
        lin(b + "attn.proj", hv, hv, true);
        lin(b + "mlp.gate_proj", iv, hv, true);
        lin(b + "mlp.up_proj", iv, hv, true);
        lin(b + "mlp.down_proj", hv, iv, true);
      }
      e.Plain(p + "merger.ln_q.weight", {hv});
      lin(p + "merger.mlp.0", hv * m2, hv * m2, true);
      lin(p + "merger.mlp.2", v.out_hidden_size, hv * m2, true);
      break;
    case VisionKind::kQwen3Vl: {
      // transformers Qwen3VLVisionModel: LayerNorm, fc1/fc2 MLP, learned position table,
      // merger and one deepstack merger per deepstack index.
      e.Plain(p + "patch_embed.proj.weight", {hv, c, t, ps, ps});
      e.Plain(p + "patch_embed.proj.bias", {hv});
      if (v.num_position_embeddings > 0)
        e.Plain(p + "pos_embed.weight", {static_cast<uint64_t>(v.num_position_embeddings), hv});
      for (int64_t i = 0; i < v.depth; ++i) {
        const std::string b = fmt::format("{}blocks.{}.", p, i);
        e.Plain(b + "norm1.weight", {hv});
        e.Plain(b + "norm1.bias", {hv});
        e.Plain(b + "norm2.weight", {hv});
        e.Plain(b + "norm2.bias", {hv});
        lin(b + "attn.qkv", 3 * hv, hv, true);
        lin(b + "attn.proj", hv, hv, true);
        lin(b + "mlp.linear_fc1", iv, hv, true);
        lin(b + "mlp.linear_fc2", hv, iv, true);
      }
      auto merger = [&](const std::string& mp, uint64_t norm_width) {
        e.Plain(mp + "norm.weight", {norm_width});
        e.Plain(mp + "norm.bias", {norm_width});
        lin(mp + "linear_fc1", hv * m2, hv * m2, true);
        lin(mp + "linear_fc2", v.out_hidden_size, hv * m2, true);
      };
      merger(p + "merger.", hv);
      for (size_t j = 0; j < v.deepstack_indexes.size(); ++j) {
        merger(fmt::format("{}deepstack_merger_list.{}.", p, j), hv * m2);
      }
      break;
    }
    case VisionKind::kSiglip: {
      const std::string vp = p;
      const uint64_t grid =
          v.image_size > 0 && ps > 0 ? (v.image_size / ps) * (v.image_size / ps) : 0;
      e.Plain(vp + "embeddings.patch_embedding.weight", {hv, c, ps, ps});
      e.Plain(vp + "embeddings.patch_embedding.bias", {hv});
      e.Plain(vp + "embeddings.position_embedding.weight", {grid, hv});
      for (int64_t i = 0; i < v.depth; ++i) {
        const std::string b = fmt::format("{}encoder.layers.{}.", vp, i);
        e.Plain(b + "layer_norm1.weight", {hv});
        e.Plain(b + "layer_norm1.bias", {hv});
        for (const char* x : {"q_proj", "k_proj", "v_proj", "out_proj"})
          lin(b + "self_attn." + x, hv, hv, true);
        e.Plain(b + "layer_norm2.weight", {hv});
        e.Plain(b + "layer_norm2.bias", {hv});
        lin(b + "mlp.fc1", iv, hv, true);
        lin(b + "mlp.fc2", hv, iv, true);
      }
      e.Plain(vp + "post_layernorm.weight", {hv});
      e.Plain(vp + "post_layernorm.bias", {hv});
      e.Plain("multi_modal_projector.mm_input_projection_weight",
              {hv, static_cast<uint64_t>(s.hidden_size)});
      e.Plain("multi_modal_projector.mm_soft_emb_norm.weight", {hv});
      break;
    }
    case VisionKind::kGemma4: {
      // transformers Gemma4VisionModel: a patch projection, a two-axis position table of
      // Gemma4VisionConfig's default position_embedding_size (10,240), Gemma-style layers
      // (q/k/v/o of num_heads x head_dim = hidden, q/k norms, a gated MLP, four norms), then
      // Gemma4MultimodalEmbedder's projection into the text width (embed_vision).
      constexpr uint64_t kPositions = 10240;
      e.Plain(p + "patch_embedder.input_proj.weight", {hv, c * ps * ps});
      e.Plain(p + "patch_embedder.position_embedding_table", {2, kPositions, hv});
      const uint64_t hd = v.num_heads > 0 ? hv / static_cast<uint64_t>(v.num_heads) : hv;
      for (int64_t i = 0; i < v.depth; ++i) {
        const std::string b = fmt::format("{}encoder.layers.{}.", p, i);
        for (const char* x : {"q_proj", "k_proj", "v_proj", "o_proj"})
          lin(b + "self_attn." + x, hv, hv, false);
        e.Plain(b + "self_attn.q_norm.weight", {hd});
        e.Plain(b + "self_attn.k_norm.weight", {hd});
        lin(b + "mlp.gate_proj", iv, hv, false);
        lin(b + "mlp.up_proj", iv, hv, false);
        lin(b + "mlp.down_proj", hv, iv, false);
        for (const char* n : {"input_layernorm", "post_attention_layernorm",
                              "pre_feedforward_layernorm", "post_feedforward_layernorm"})
          e.Plain(b + n + ".weight", {hv});
      }
      e.Plain("model.embed_vision.embedding_projection.weight",
              {static_cast<uint64_t>(s.hidden_size), hv});
      break;
    }
    case VisionKind::kPixtral: {
      // transformers PixtralVisionModel (a bias-free Conv2d patch embedding, RMSNorm ln_pre,
      // Llama-style layers: attention_norm, q/k/v/o, ffn_norm, gated feed_forward) and
      // Mistral3MultiModalProjector (an RMSNorm, the patch merger's merging_layer over
      // spatial_merge_size^2 patches, linear_1 and linear_2 into the text width; no biases:
      // multimodal_projector_bias false), as the checkpoints name them.
      const std::string vp = "vision_tower.";
      const uint64_t ht = static_cast<uint64_t>(s.hidden_size);
      e.Plain(vp + "patch_conv.weight", {hv, c, ps, ps});
      e.Plain(vp + "ln_pre.weight", {hv});
      for (int64_t i = 0; i < v.depth; ++i) {
        const std::string b = fmt::format("{}transformer.layers.{}.", vp, i);
        e.Plain(b + "attention_norm.weight", {hv});
        for (const char* x : {"q_proj", "k_proj", "v_proj", "o_proj"})
          lin(b + "attention." + x, hv, hv, false);
        e.Plain(b + "ffn_norm.weight", {hv});
        lin(b + "feed_forward.gate_proj", iv, hv, false);
        lin(b + "feed_forward.up_proj", iv, hv, false);
        lin(b + "feed_forward.down_proj", hv, iv, false);
      }
      const std::string mp = "multi_modal_projector.";
      e.Plain(mp + "norm.weight", {hv});
      lin(mp + "patch_merger.merging_layer", hv, hv * m2, false);
      lin(mp + "linear_1", ht, hv, false);
      lin(mp + "linear_2", ht, ht, false);
      break;
    }
    case VisionKind::kNone:
    case VisionKind::kQwen2Vl:
    case VisionKind::kOther:
      break;
  }
}

// Gemma 4 E2B/E4B's audio conformer (transformers Gemma4AudioModel, after Gemma 3n's): per
// block two feed-forward modules of 4 x hidden, attention (q, k, v, post and a relative
// position projection), a light conv module (a 2 x hidden GLU input, a depthwise conv of
// kernel 5, an output linear) and norms; a two-conv subsampler; the output projection to
// output_proj_dims and embed_audio's projection into the text width.
void Audio(Emitter& e, const ModelSpec& s) {
  const AudioSpec& a = s.audio;
  if (a.depth <= 0 || a.hidden_size <= 0) return;
  const uint64_t ha = static_cast<uint64_t>(a.hidden_size);
  const std::string p = "model.audio_tower.";
  for (int64_t i = 0; i < a.depth; ++i) {
    const std::string b = fmt::format("{}conformer.{}.", p, i);
    for (const char* f : {"ffw_layer_start.", "ffw_layer_end."}) {
      e.Plain(b + f + "ffw_layer_1.weight", {4 * ha, ha});
      e.Plain(b + f + "ffw_layer_2.weight", {ha, 4 * ha});
      e.Plain(b + f + "pre_layer_norm.weight", {ha});
      e.Plain(b + f + "post_layer_norm.weight", {ha});
    }
    for (const char* x : {"q_proj", "k_proj", "v_proj", "post", "pos_proj"})
      e.Plain(b + "attention." + x + ".weight", {ha, ha});
    e.Plain(b + "lconv1d.linear_start.weight", {2 * ha, ha});
    e.Plain(b + "lconv1d.depthwise_conv1d.weight", {ha, 1, 5});
    e.Plain(b + "lconv1d.linear_end.weight", {ha, ha});
    e.Plain(b + "norm.weight", {ha});
  }
  e.Plain(p + "subsample_conv_projection.weight", {ha, 32 * 32});
  const uint64_t out = static_cast<uint64_t>(a.out_hidden_size > 0 ? a.out_hidden_size
                                                                       : a.hidden_size);
  e.Plain(p + "output_proj.weight", {out, ha});
  e.Plain("model.embed_audio.embedding_projection.weight",
          {static_cast<uint64_t>(s.hidden_size), out});
}

// Largest tensor count a synthesized checkpoint may have. Real ones stay under 100,000
// (DeepSeek-V3 with its MTP layer: 91,991); a config that implies more is hostile or broken.
constexpr uint64_t kMaxSynthesizedTensors = 5'000'000;

uint64_t EstimateTensorCount(const ModelSpec& s) {
  uint64_t n = 8;
  auto layer = [&](const LayerSpec& l) {
    uint64_t linears = 6;  // attention: up to 6 projections (Qwen3.5 linear attention)
    if (l.mlp.kind == MlpKind::kMoe) linears += 3 * static_cast<uint64_t>(l.mlp.num_experts) + 5;
    else linears += 3;
    return 8 + 7 * linears;  // at most 6 tensors per quantized linear, plus its bias
  };
  for (const LayerSpec& l : s.layers) n += layer(l);
  if (!s.layers.empty()) n += static_cast<uint64_t>(s.mtp_layers) * (layer(s.layers.back()) + 8);
  n += static_cast<uint64_t>(s.vision.depth) * 24 + 16;
  if (s.audio.depth > 0) n += static_cast<uint64_t>(s.audio.depth) * 24 + 8;
  return n;
}

// Emits every tensor of the spec into `e`.
void EmitAll(Emitter& e, const ModelSpec& s) {
  const uint64_t h = s.hidden_size, vocab = s.vocab_size;
  const QuantScheme& q = s.quant;
  e.Plain(s.naming.embed, {vocab, h});
  if (s.per_layer_input_size > 0) {
    // Gemma 4 E2B/E4B: embed_tokens_per_layer [vocab_per_layer, layers x ple], its projection
    // from the hidden state and a norm (Gemma4TextModel); vLLM keeps them on the GPU.
    const std::string base = s.naming.embed.substr(0, s.naming.embed.size() - 19);
    const uint64_t width = static_cast<uint64_t>(s.per_layer_input_size) * s.layers.size();
    e.Plain(base + "embed_tokens_per_layer.weight",
            {static_cast<uint64_t>(s.per_layer_vocab_size), width});
    e.Plain(base + "per_layer_model_projection.weight", {width, h});
    e.Plain(base + "per_layer_projection_norm.weight",
            {static_cast<uint64_t>(s.per_layer_input_size)});
  }
  for (size_t i = 0; i < s.layers.size(); ++i) {
    Layer(e, s, fmt::format("{}{}.", s.naming.layers, i), s.layers[i], true);
  }
  e.Plain(s.naming.final_norm, {h});
  if (!s.tie_word_embeddings) {
    const std::string head =
        s.naming.lm_head.substr(0, s.naming.lm_head.size() - 7);  // drop ".weight"
    const bool quant_head =
        (q.method == QuantMethod::kCompressedTensors && QuantSchemeCovers(q, head)) ||
        ((q.method == QuantMethod::kAwq || q.method == QuantMethod::kGptq) && q.lm_head_quantized);
    e.Linear(head, vocab, h, false, quant_head);
  }
  // MTP layers, as the family stores them.
  if (s.mtp_layers > 0 && !s.layers.empty()) {
    const LayerSpec& last = s.layers.back();
    LayerSpec mtp_layer = last;
    mtp_layer.attention.kind =
        last.attention.kind == AttentionKind::kMla ? AttentionKind::kMla : AttentionKind::kFull;
    for (const LayerSpec& l : s.layers) {
      if (l.attention.kind == AttentionKind::kFull || l.attention.kind == AttentionKind::kMla)
        mtp_layer.attention = l.attention;
    }
    if (s.family == "deepseek_v3" || s.family == "deepseek_v2" || s.family == "glm4_moe") {
      // DeepSeek-V3 stores MTP module k as decoder layer num_hidden_layers + k, with its own
      // embedding and head copies; GLM-4.5's MTP layer is stored the same way (vLLM
      // glm4_moe_mtp.py: enorm, hnorm, eh_proj, shared_head).
      for (int64_t k = 0; k < s.mtp_layers; ++k) {
        const std::string p = fmt::format("{}{}.", s.naming.layers, s.layers.size() + k);
        e.Plain(p + "embed_tokens.weight", {vocab, h});
        e.Plain(p + "enorm.weight", {h});
        e.Plain(p + "hnorm.weight", {h});
        e.Plain(p + "eh_proj.weight", {h, 2 * h});
        Layer(e, s, p, mtp_layer, true);
        e.Plain(p + "shared_head.norm.weight", {h});
        e.Plain(p + "shared_head.head.weight", {vocab, h});
      }
    } else {
      // Qwen3-Next / Qwen3.5: mtp.fc, two pre-fc norms, mtp.layers.*, mtp.norm (vLLM
      // qwen3_next_mtp.py). Qwen's FP8 release quantizes the MTP layer like the decoder (its
      // modules_to_not_convert lists mtp.fc and the MTP router, not the MTP experts); the
      // AWQ/GPTQ/compressed-tensors tools quantize the transformers model, which has no MTP
      // modules, so their MTP tensors stay unquantized, except AutoRound's when its
      // block_name_to_quantize names mtp.layers (the scheme's rules decide per module).
      const bool mtp_quant =
          q.method == QuantMethod::kFp8 || model::IsAutoRoundMethod(q.method_text);
      const std::string fc = s.naming.mtp + "fc";
      e.Linear(fc, h, 2 * h, false, mtp_quant && e.Quantize(fc));
      e.Plain(s.naming.mtp + "pre_fc_norm_embedding.weight", {h});
      e.Plain(s.naming.mtp + "pre_fc_norm_hidden.weight", {h});
      for (int64_t k = 0; k < s.mtp_layers; ++k) {
        Layer(e, s, fmt::format("{}layers.{}.", s.naming.mtp, k), mtp_layer, mtp_quant);
      }
      e.Plain(s.naming.mtp + "norm.weight", {h});
    }
  }
  Vision(e, s);
  Audio(e, s);
}

Status CheckSize(const ModelSpec& s) {
  const uint64_t estimate = EstimateTensorCount(s);
  if (estimate > kMaxSynthesizedTensors) {
    return Status::Corrupt(fmt::format(
        "config.json: these dimensions imply about {} tensors, more than any real checkpoint "
        "(limit {}): check num_hidden_layers, num_experts and the vision depth",
        estimate, kMaxSynthesizedTensors));
  }
  return Status::Ok();
}

const Status kOverflow =
    Status::Corrupt("config.json: the dimensions multiply past 64 bits: not a real model");

}  // namespace

Result<FileTensors> SynthesizeTensors(const ModelSpec& s) {
  VRAMFIT_RETURN_IF_ERROR(CheckSize(s));
  Emitter e(s, true);
  EmitAll(e, s);
  bool overflow = false;
  FileTensors f = e.Finish(&overflow);
  if (overflow) return kOverflow;
  f.name = "(synthesized)";
  return f;
}

Result<uint64_t> SynthesizedBytes(const ModelSpec& s) {
  VRAMFIT_RETURN_IF_ERROR(CheckSize(s));
  Emitter e(s, false);
  EmitAll(e, s);
  bool overflow = false;
  e.Finish(&overflow);
  if (overflow) return kOverflow;
  return e.bytes();
}

}  // namespace vramfit
