// vLLM weight sharding and quantization paths (see vramfit/vllm_weights.h). Source anchors
// (../shared/reference/vllm-memory.md §5, upstream ~v0.10 to ~v0.22-dev):
//   VocabParallelEmbedding / ParallelLMHead: vocab padded to a multiple of 64, rows split by TP.
//   QKVParallelLinear / MergedColumnParallelLinear: output dim split; KV heads max(1, kv // tp),
//     replicated when TP exceeds them. RowParallelLinear: input dim split; bias kept whole.
//   ReplicatedLinear: DeepSeek q_a_proj and kv_a_proj_with_mqa; norms, routers, small params.
//   FusedMoE: without EP every rank holds all experts at I/tp; with EP, E/ep whole experts.
//   gptq_marlin: symmetric zero points and g_idx without act-order become empty tensors; with
//     act-order, scales of row-parallel layers stay whole on every rank.
//   process_weights_after_loading: Marlin repacks allocate the new layout while the old one is
//     alive; the transient is one module's largest repacked tensors (a layer's expert stack).
//   fp8 online quantization (--quantization fp8 on a 16-bit checkpoint): before v0.16 the full
//     16-bit model is resident before quantizing (PR #31914 fixed it: then one layer at a time).
//   bitsandbytes in-flight quantization (--quantization bitsandbytes on a 16-bit checkpoint):
//     model_loader/bitsandbytes_loader.py _quantized_4bit_generator moves one checkpoint tensor
//     (its TP slice) to the GPU and quantize_4bit(..., compress_statistics=True,
//     quant_type="nf4") packs it: NF4 values two per byte, one uint8 absmax per 64 values (the
//     default blocksize) and one float32 absmax per 256 of those (the nested statistics).
//     Every LinearBase module is a target; the embedding and ParallelLMHead are not.
#include "engines/vllm/weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "core/checked.h"
#include "model/auto_round.h"
#include "model/kv_share.h"
#include "model/roles.h"

namespace vramfit {
namespace {

using core::CeilDiv;

bool IsRowParallel(const std::string& leaf) {
  return leaf == "o_proj" || leaf == "down_proj" || leaf == "w2" || leaf == "out_proj" ||
         leaf == "dense" || leaf == "proj" || leaf == "fc2" || leaf == "linear_fc2" ||
         leaf == "c_proj" || leaf == "wo";
}


enum class Shard : uint8_t {
  kReplicated,  // norms, routers, small params, row-parallel biases, replicated linears
  kSplit,       // column- or row-parallel: 1/tp
  kKv,          // k/v projections: KV heads per rank max(1, kv // tp)
  kVocab,       // embedding / lm_head: padded vocab rows split by TP (bytes = one row)
  kExpert,      // MoE experts: 1/tp, or 1/ep whole experts
  kRowMeta,     // quantization metadata of row-parallel layers (whole under Marlin act-order)
  kMtp,         // MTP layers: loaded only for speculative decoding
};
enum Flag : uint8_t {
  kGIdx = 1, kQZeros = 2, kQuantWeight = 4, kWideLinearWeight = 8, kBias = 16,
  kModelDtype = 32,  // stored in the config's dtype: loads in --dtype
  kMatrix = 64,      // two or more dimensions (an MTP linear's weight or its quantization data)
  kMultimodal = 128, // the vision tower or the projector: not built under --language-model-only
};
constexpr uint32_t kNoModule = UINT32_MAX;

// Which pipeline stage holds a tensor outside the decoder layers (vLLM's models build these on
// the first or the last PP rank and a PPMissingLayer elsewhere: model_executor/models/llama.py
// LlamaModel, LlamaForCausalLM, the pattern the other decoders copy).
enum class Place : uint8_t {
  kLayer,  // a decoder layer's: the stage that holds the layer
  kFirst,  // the input embedding, and (by default) anything else outside the layers
  kLast,   // the final norm and lm_head (MTP heads too: they run after the last layer)
  kEvery,  // built on every stage (the families below)
};



struct CompactTensor {
  uint64_t bytes;       // kVocab: bytes of one vocab row
  uint64_t parameters;  // for kQuantWeight: logical parameters
  uint32_t module;      // repack unit (a linear, or one layer's expert stack), or kNoModule
  Shard shard;
  uint8_t flags;
  uint8_t dtype_bits;
  Place place;
  int32_t layer;        // decoder layer index (kLayer)
};

}  // namespace

struct VllmWeightProfile {
  QuantScheme quant;
  int64_t kv_heads = 0;
  uint64_t vocab = 0;
  uint64_t rotary_bytes = 0;  // RoPE cos/sin cache, one per model
  // gpt-oss MXFP4 experts, re-laid by vLLM (counted from the config, not the checkpoint).
  uint64_t mxfp4_layers = 0, mxfp4_experts = 0, mxfp4_hidden = 0, mxfp4_inter = 0;
  std::vector<int64_t> mxfp4_layer_index;  // the decoder layers those are
  std::vector<CompactTensor> tensors;
  std::vector<std::string> modules;  // names of repack units
  bool has_lm_head = false;          // false: lm_head is tied to the embedding
};

std::shared_ptr<const VllmWeightProfile> ProfileVllmWeights(const Inventory& inv) {
  auto p = std::make_shared<VllmWeightProfile>();
  const ModelSpec& spec = inv.spec;
  p->quant = spec.quant;
  for (const auto& l : spec.layers) {
    if (l.attention.kind == AttentionKind::kFull || l.attention.kind == AttentionKind::kSliding) {
      p->kv_heads = l.attention.num_kv_heads;
      break;
    }
  }
  p->vocab = static_cast<uint64_t>(spec.vocab_size);
  // RotaryEmbedding.cos_sin_cache: [max_position, rotary_dim] in the model dtype; gpt-oss's YaRN
  // cache is float32. One table serves all layers.
  if (!spec.layers.empty()) {
    const AttentionSpec& a = spec.layers.back().attention;
    const uint64_t rot =
        static_cast<uint64_t>(a.kind == AttentionKind::kMla ? a.qk_rope_head_dim : a.head_dim);
    p->rotary_bytes = static_cast<uint64_t>(std::max<int64_t>(0, spec.max_position_embeddings)) *
                      rot * (spec.family == "gpt_oss" ? 4 : 2);
  }
  if (spec.quant.layout == QuantLayout::kMxfp4Blocks) {
    for (size_t i = 0; i < spec.layers.size(); ++i) {
      const LayerSpec& l = spec.layers[i];
      if (l.mlp.kind != MlpKind::kMoe) continue;
      ++p->mxfp4_layers;
      p->mxfp4_layer_index.push_back(static_cast<int64_t>(i));
      p->mxfp4_experts = static_cast<uint64_t>(l.mlp.num_experts);
      p->mxfp4_inter = static_cast<uint64_t>(l.mlp.expert_intermediate_size);
    }
    p->mxfp4_hidden = static_cast<uint64_t>(spec.hidden_size);
  }
  std::unordered_map<std::string_view, uint32_t> module_ids;
  std::unordered_map<uint64_t, uint32_t> expert_ids;  // (layer << 1 | is_down) -> id
  p->tensors.reserve(inv.tensors.size());
  const bool gemma4 = spec.family == "gemma4";
  std::vector<CompactTensor> k_proj;  // Gemma 4's duplicated K/V slots, below
  for (const TensorEntry& e : inv.tensors) {
    const TensorInfo& t = e.info;
    const std::string_view module = e.module();
    const size_t dot = module.rfind('.');
    const std::string_view leaf = dot == std::string_view::npos ? module : module.substr(dot + 1);
    const std::string_view part = t.name.size() > module.size()
                                      ? std::string_view(t.name).substr(module.size() + 1)
                                      : std::string_view();
    CompactTensor c{t.bytes(),          0, kNoModule,
                    Shard::kReplicated, 0, static_cast<uint8_t>(DtypeBits(t.dtype)),
                    Place::kFirst,      -1};
    if (e.layer >= 0 && e.role != Role::kMtp) {
      c.place = Place::kLayer;
      c.layer = static_cast<int32_t>(std::min<int64_t>(e.layer, INT32_MAX));
    } else if (VllmVocabOnEveryStage(spec.family) &&
               (e.role == Role::kEmbedding || e.role == Role::kLmHead || e.role == Role::kNorm)) {
      c.place = Place::kEvery;
    } else if (e.role == Role::kLmHead || e.role == Role::kNorm || e.role == Role::kMtp) {
      c.place = Place::kLast;
    }
    p->has_lm_head = p->has_lm_head || e.role == Role::kLmHead;
    if (part == "g_idx") c.flags |= kGIdx;
    if (part == "qzeros") c.flags |= kQZeros;
    if (e.part == Part::kBias) c.flags |= kBias;
    if (e.role == Role::kVision || e.role == Role::kProjector) c.flags |= kMultimodal;
    if (t.dtype == spec.dtype && e.part != Part::kQuantMeta) c.flags |= kModelDtype;
    if (t.shape.size() >= 2 && leaf != "eh_proj") c.flags |= kMatrix;  // DeepSeek: nn.Linear
    const bool row = IsRowParallel(std::string(leaf));
    switch (e.role) {
      case Role::kMtp: c.shard = Shard::kMtp; break;
      case Role::kEmbedding:
      case Role::kLmHead:
        if (!t.shape.empty() && t.shape[0] == p->vocab && p->vocab > 0) {
          c.shard = Shard::kVocab;
          c.bytes = t.bytes() / p->vocab;
        } else {
          c.shard = Shard::kSplit;
        }
        break;
      case Role::kAttnProj:
        if (leaf == "k_proj" || leaf == "v_proj") c.shard = Shard::kKv;
        else if (row && e.part == Part::kBias)
          c.shard = Shard::kReplicated;  // RowParallelLinear keeps its bias
        else if (row && e.part == Part::kQuantMeta) c.shard = Shard::kRowMeta;
        else c.shard = Shard::kSplit;
        break;
      case Role::kMlaProj:
        c.shard = (leaf == "q_a_proj" || leaf == "kv_a_proj_with_mqa") ? Shard::kReplicated
                                                                       : Shard::kSplit;
        break;
      case Role::kLinearAttnProj:
      case Role::kMlpProj:
      case Role::kSharedExpertProj:
      case Role::kVision:
      case Role::kProjector:
        if (row && e.part == Part::kBias) c.shard = Shard::kReplicated;
        else if (e.role == Role::kVision && t.shape.size() < 2) c.shard = Shard::kReplicated;
        else if (row && e.part == Part::kQuantMeta) c.shard = Shard::kRowMeta;
        else c.shard = Shard::kSplit;
        break;
      case Role::kExpertProj: c.shard = Shard::kExpert; break;
      case Role::kLinearAttnState:
      case Role::kAttnSinks:
        c.shard = leaf == "norm" ? Shard::kReplicated
                                 : Shard::kSplit;  // conv1d, A_log, dt_bias, sinks: by heads
        break;
      case Role::kNorm:
      case Role::kRouter:
      case Role::kSharedExpertGate:
      case Role::kOther:
        c.shard = Shard::kReplicated;
        break;
    }
    // Gemma 4's towers are transformers modules (AutoModel.from_config in models/gemma4_mm.py,
    // read at 0.19), built without tensor parallelism: whole on every rank.
    if (gemma4 && (e.role == Role::kVision || e.role == Role::kProjector)) {
      c.shard = Shard::kReplicated;
    }
    if (model::IsCountedLinear(e.role)) {
      if (e.part == Part::kWeight && e.quantized) {
        c.flags |= kQuantWeight;
        c.parameters = e.parameters;
      }
      if (e.part == Part::kWeight && IsWideFloat(t.dtype)) c.flags |= kWideLinearWeight;
      if (e.part != Part::kBias) {
        // Experts of one layer are repacked as one fused stack (w13, w2).
        if (e.role == Role::kExpertProj) {
          const bool down = leaf == "down_proj" || leaf == "w2";
          const uint64_t key = (static_cast<uint64_t>(e.layer) << 1) | (down ? 1 : 0);
          auto [it, fresh] = expert_ids.try_emplace(key, static_cast<uint32_t>(p->modules.size()));
          if (fresh)
            p->modules.push_back(
                fmt::format("layer {} experts ({})", e.layer, down ? "w2" : "w13"));
          c.module = it->second;
        } else {
          auto [it, fresh] =
              module_ids.try_emplace(module, static_cast<uint32_t>(p->modules.size()));
          if (fresh) p->modules.emplace_back(module);
          c.module = it->second;
        }
      }
    }
    if (gemma4 && e.role == Role::kAttnProj && leaf == "k_proj" && c.layer >= 0)
      k_proj.push_back(c);
    p->tensors.push_back(c);
  }
  // Gemma 4 (models/gemma4.py, read at 0.19): a K = V layer's qkv_proj keeps a V slot that the
  // loader fills with a copy of k_proj ("k_eq_v layers load K weights into both K and V
  // slots"), and a KV-shared layer keeps a whole qkv_proj whose K and V slots no checkpoint
  // tensor fills (it computes and discards them). Both are charged as copies of the k_proj of
  // the layer, or of the layer it shares with.
  if (gemma4) {
    auto copies = [&](int64_t from, int32_t to, int times) {
      for (const CompactTensor& k : k_proj) {
        if (k.layer != from) continue;
        CompactTensor c = k;
        c.layer = to;
        c.module = kNoModule;
        for (int t = 0; t < times; ++t) p->tensors.push_back(c);
      }
    };
    const int64_t n = static_cast<int64_t>(spec.layers.size());
    for (int64_t i = 0; i < n; ++i) {
      const AttentionSpec& a = spec.layers[static_cast<size_t>(i)].attention;
      if (a.kv_shared) {
        const int64_t j = model::KvShareTarget(spec, i);
        if (j >= 0) copies(j, static_cast<int32_t>(i), 2);
      } else if (a.k_eq_v) {
        copies(i, static_cast<int32_t>(i), 1);
      }
    }
  }
  return p;
}

Result<VllmWeights> VllmWeightsPerRank(const Inventory& inv, const VllmWeightOptions& o) {
  return VllmWeightsPerRank(*ProfileVllmWeights(inv), o);
}

Result<VllmWeights> VllmWeightsPerRank(const VllmWeightProfile& p, const VllmWeightOptions& o) {
  if (o.tensor_parallel_size <= 0 || o.data_parallel_size <= 0) {
    return Status::InvalidArgument("tensor and data parallel sizes must be positive");
  }
  const uint64_t tp = static_cast<uint64_t>(o.tensor_parallel_size);
  const uint64_t ep =
      o.enable_expert_parallel ? tp * static_cast<uint64_t>(o.data_parallel_size) : 1;
  const QuantScheme& q = p.quant;
  VllmWeights w;
  const bool gptq_like = q.method == QuantMethod::kGptq;
  const bool awq = q.method == QuantMethod::kAwq;
  // An AutoRound checkpoint is served per layer by the same GPTQ/AWQ kernels
  // (quantization/auto_round.py apply_gptq_quant_layer / apply_awq_quant_layer; inc/inc.py
  // INCWna16Scheme from ~0.21): named "auto-round (gptq_marlin)" and so on.
  const bool auto_round = model::IsAutoRoundMethod(q.method_text) &&
                          (o.quantization.empty() || model::IsAutoRoundMethod(o.quantization) ||
                           o.quantization == "inc");
  const std::string per_layer = awq ? (o.marlin ? "awq_marlin" : "awq")
                                : gptq_like ? (o.marlin ? "gptq_marlin" : "gptq")
                                            : "";
  w.kernel = auto_round && !per_layer.empty() ? "auto-round (" + per_layer + ")"
             : !o.quantization.empty()        ? o.quantization
             : !per_layer.empty()             ? per_layer
             : q.quantized()                  ? QuantMethodName(q.method)
                                              : "unquantized";
  const bool marlin_gptq = gptq_like && o.marlin;
  const bool marlin_any =
      o.marlin &&
      (awq || gptq_like || q.layout == QuantLayout::kCtPacked ||
       (q.layout == QuantLayout::kMxfp4Blocks && o.mxfp4_backend == "marlin"));
  const bool online_fp8 = o.quantization == "fp8" && !q.quantized();
  const bool online_bnb = o.quantization == "bitsandbytes" && !q.quantized();
  const uint64_t kv_heads = static_cast<uint64_t>(std::max<int64_t>(0, p.kv_heads));
  const uint64_t kv_rank_heads = kv_heads > 0 ? std::max<uint64_t>(1, kv_heads / tp) : 0;
  const uint64_t vocab_rows = CeilDiv(CeilDiv(p.vocab, 64) * 64, tp);  // padded to 64, split by TP
  std::vector<uint64_t> module_bytes(p.modules.size(), 0);
  uint64_t online_fp8_source = 0, largest_linear_fp16 = 0, largest_bnb_source = 0;
  const bool all_layers = o.layers < 0;
  const int64_t end_layer = all_layers ? 0 : o.first_layer + o.layers;
  auto on_stage = [&](const CompactTensor& c) {
    switch (c.place) {
      case Place::kLayer:
        return all_layers || (c.layer >= o.first_layer && c.layer < end_layer);
      case Place::kFirst: return o.first_stage;
      case Place::kLast: return o.last_stage;
      case Place::kEvery: return true;
    }
    return true;
  };
  for (const CompactTensor& c : p.tensors) {
    if (!on_stage(c)) {
      // The last stage of a tied checkpoint builds lm_head as a copy of the embedding's shape
      // (llama.py: embed_tokens on the last rank too when tie_word_embeddings).
      const bool tied_head = c.shard == Shard::kVocab && c.place == Place::kFirst &&
                             !p.has_lm_head && o.last_stage && !o.first_stage;
      if (!tied_head) continue;
    }
    if (c.shard == Shard::kMtp && !o.load_speculative_mtp) {
      w.skipped_bytes += c.bytes;
      continue;
    }
    if ((c.flags & kMultimodal) && o.language_model_only) {
      w.tower_skipped_bytes += c.bytes;
      continue;
    }
    if (p.mxfp4_layers > 0 && c.shard == Shard::kExpert) continue;  // re-laid below
    // gptq_marlin frees g_idx without act-order and the zero points of symmetric schemes.
    if (marlin_gptq &&
        (((c.flags & kGIdx) && !q.act_order) || ((c.flags & kQZeros) && q.symmetric))) {
      w.dropped_bytes += c.bytes;
      continue;
    }
    uint64_t rank = c.bytes;
    switch (c.shard) {
      case Shard::kReplicated: break;
      case Shard::kMtp:
        // Qwen3-Next/3.5 MTP (qwen3_next_mtp.py): fc is a ColumnParallelLinear and the layers
        // are decoder layers, so their linears split by TP like the decoder's; norms stay whole.
        // DeepSeek's (deepseek_mtp.py): embedding and shared head by vocab, the layer by TP,
        // eh_proj replicated.
        if (c.flags & kMatrix) rank = CeilDiv(c.bytes, tp);
        break;
      case Shard::kSplit: rank = CeilDiv(c.bytes, tp); break;
      case Shard::kKv:
        rank = kv_heads > 0 ? c.bytes / kv_heads * kv_rank_heads : CeilDiv(c.bytes, tp);
        break;
      case Shard::kVocab: rank = vocab_rows * c.bytes; break;
      case Shard::kExpert:
        if (o.enable_expert_parallel && o.num_redundant_experts > 0 && o.num_routed_experts > 0) {
          const uint64_t e = static_cast<uint64_t>(o.num_routed_experts);
          rank = CeilDiv(c.bytes * (e + static_cast<uint64_t>(o.num_redundant_experts)), e * ep);
        } else {
          rank = o.enable_expert_parallel ? CeilDiv(c.bytes, ep) : CeilDiv(c.bytes, tp);
        }
        break;
      case Shard::kRowMeta:
        rank = marlin_gptq && q.act_order ? c.bytes : CeilDiv(c.bytes, tp);
        break;  // marlin_repeat_scales_on_all_ranks
    }
    if ((c.flags & kMultimodal) && o.encoder_replicated) rank = c.bytes;
    uint64_t bits = c.dtype_bits;
    if (o.model_dtype_bits > 0 && (c.flags & kModelDtype) && bits > 0) {
      rank = rank * static_cast<uint64_t>(o.model_dtype_bits) / bits;
      bits = static_cast<uint64_t>(o.model_dtype_bits);
    }
    if (online_fp8 && (c.flags & kWideLinearWeight)) {
      online_fp8_source += rank;
      rank = rank * 8 / bits;  // FP8 E4M3 values
    }
    if (online_bnb && (c.flags & kWideLinearWeight) && bits > 0) {
      largest_bnb_source = std::max(largest_bnb_source, rank);
      const uint64_t values = rank * 8 / bits;
      const uint64_t blocks = CeilDiv(values, 64);
      rank = CeilDiv(values, 2) + blocks + 4 * CeilDiv(blocks, 256);
    }
    w.bytes_per_rank += rank;
    if (c.module != kNoModule) module_bytes[c.module] += rank;
    if (c.flags & kQuantWeight) {
      largest_linear_fp16 =
          std::max(largest_linear_fp16, c.parameters * 2 / (c.shard == Shard::kExpert ? 1 : tp));
    }
  }
  w.bytes_per_rank += p.rotary_bytes;
  if (p.mxfp4_layers > 0) {
    // gpt-oss experts, re-laid by the backend VllmMxfp4Backend picks (docs/engines/vllm.md,
    // "MXFP4"). Values 4-bit (2 per byte), E8M0 scales per 32 values, one bias per output row.
    // vllm/model_executor/layers/quantization/mxfp4.py Mxfp4MoEMethod.create_weights (v0.10.1 to
    // v0.14) pads the intermediate size per partition (I) and the hidden size (H):
    // - Marlin: I to 128, H to 256, biases bf16; prepare_moe_fp4_layer_for_marlin repacks into
    //   the same sizes;
    // - FlashInfer TRT-LLM (SM100): I and H to 256, biases fp32 after
    //   process_weights_after_loading;
    // - Triton (triton_kernels matmul_ogs): I to 64, H as is, biases fp32. _swizzle_mxfp4
    //   (quantization/utils/mxfp4_utils.py) converts values to HopperMXValueLayout, which at the
    //   triton_kernels tag vLLM bundles (v3.5.x) pads only to its 16 x 32-byte tile, and scales
    //   to HopperMXScaleLayout, whose rows (the output features) pad to 2 x num_warps(8) x 2 x 8
    //   = 256; the checkpoint-layout scale parameters stay registered on the layer (only the
    //   weights are deleted), so both copies of the scales are held.
    const std::string& be = o.mxfp4_backend;
    const bool trtllm = be == "flashinfer-trtllm", triton = be == "triton";
    const uint64_t experts =
        o.enable_expert_parallel ? CeilDiv(p.mxfp4_experts, ep) : p.mxfp4_experts;
    const uint64_t inter = o.enable_expert_parallel ? p.mxfp4_inter : CeilDiv(p.mxfp4_inter, tp);
    const uint64_t i_align = trtllm ? 256 : triton ? 64 : 128;
    const uint64_t ip = CeilDiv(inter, i_align) * i_align;
    const uint64_t hp = triton ? p.mxfp4_hidden : CeilDiv(p.mxfp4_hidden, 256) * 256;
    const uint64_t bias = trtllm || triton ? 4 : 2;
    uint64_t w13 = 0, w2 = 0;
    if (triton) {
      auto up = [](uint64_t x, uint64_t a) { return CeilDiv(x, a) * a; };
      // Values: [2I rows x H/2 bytes] and [H rows x I/2 bytes], rows to 16, bytes to 32.
      w13 = experts * (up(2 * ip, 16) * up(hp / 2, 32) + up(2 * ip, 256) * up(hp / 32, 2) +
                       2 * ip * (hp / 32) + 2 * ip * bias);
      w2 = experts * (up(hp, 16) * up(ip / 2, 32) + up(hp, 256) * up(ip / 32, 2) +
                      hp * (ip / 32) + hp * bias);
    } else {
      w13 = experts * 2 * ip * (hp / 2 + hp / 32 + bias);
      w2 = experts * hp * (ip / 2 + ip / 32 + bias);
    }
    const uint64_t stage_layers = static_cast<uint64_t>(std::count_if(
        p.mxfp4_layer_index.begin(), p.mxfp4_layer_index.end(), [&](int64_t i) {
          return all_layers || (i >= o.first_layer && i < end_layer);
        }));
    w.bytes_per_rank += stage_layers * (w13 + w2);
    module_bytes.push_back(w13);
    w.kernel = trtllm ? "mxfp4 (FlashInfer TRT-LLM)"
               : triton ? "mxfp4 (Triton, triton_kernels)"
                        : "mxfp4 (Marlin)";
  }
  uint64_t largest_module = 0;
  size_t largest_at = 0;
  for (size_t i = 0; i < module_bytes.size(); ++i) {
    if (module_bytes[i] > largest_module) {
      largest_module = module_bytes[i];
      largest_at = i;
    }
  }
  if (p.mxfp4_layers > 0 && o.mxfp4_backend == "triton" && largest_module > 0) {
    // _swizzle_mxfp4 builds the new layout of one layer while the loaded one is alive.
    w.transient_bytes = largest_module;
    w.transient_reason = "Triton swizzle of a layer's MXFP4 experts (w13)";
  } else if (marlin_any && largest_module > 0) {
    w.transient_bytes = largest_module;
    w.transient_reason = fmt::format("Marlin repack of {}", largest_at < p.modules.size()
                                                                ? p.modules[largest_at]
                                                                : "a layer's MXFP4 experts (w13)");
  }
  if (online_fp8) {
    if (!o.rules.online_fp8_layerwise) {
      // The whole 16-bit model is resident before process_weights_after_loading quantizes it.
      w.transient_bytes = online_fp8_source / 2;
      w.transient_reason =
          "online FP8 quantization before v0.16 keeps the whole 16-bit model resident";
    } else {
      // Since PR #31914 one layer is materialized in 16 bits at a time.
      w.transient_bytes = largest_module * 2;
      w.transient_reason = "online FP8 quantization of one layer at a time (v0.16+)";
    }
  }
  if (online_bnb) {
    // The one 16-bit slice on the GPU while it is quantized (its packed copy is counted above).
    w.kernel = "bitsandbytes (NF4, quantized while loading)";
    w.transient_bytes = largest_bnb_source;
    w.transient_reason = "bitsandbytes quantizing one 16-bit tensor at a time";
    // BitsAndBytesLinearMethod._apply_4bit_weight runs matmul_4bit per packed shard, which for
    // more than one token dequantizes the shard to 16 bits (bitsandbytes MatMul4Bit).
    w.largest_dequantized_layer = largest_bnb_source;
  }
  if (w.kernel == "awq" || w.kernel == "auto-round (awq)") {
    w.largest_dequantized_layer = largest_linear_fp16;
  }
  w.load_peak_per_rank = w.bytes_per_rank + w.transient_bytes;
  return w;
}

bool VllmVocabOnEveryStage(const std::string& family) {
  // models/qwen3_moe.py: Qwen3MoeModel.__init__ makes VocabParallelEmbedding and RMSNorm
  // unconditionally and Qwen3MoeForCausalLM its ParallelLMHead (read at upstream 002456df, ~v0.9,
  // and in a v0.10-era copy with MixtureOfExperts); is_pp_missing_parameter then loads them on
  // every rank.
  return family == "qwen3_moe";
}

std::string VllmMxfp4Backend(int cc, const vllm::Rules& rules) {
  // quantization/mxfp4.py get_mxfp4_backend (v0.10.1 to v0.14; fused_moe/oracle/mxfp4.py
  // select_mxfp4_moe_backend later, same order): FlashInfer on the SM100 family (10.x) where
  // FlashInfer is installed; else Triton where triton_kernels imports and
  // 9.0 <= capability < 11.0 (SM110 and SM120 excluded: triton-lang/triton#8498); else Marlin.
  // triton_kernels ships inside vLLM's wheel from v0.12 (PR #28788); before, it had to be
  // installed by hand, and published Hopper logs of v0.10-v0.11 show Marlin.
  if (cc >= 100 && cc < 110) return "flashinfer-trtllm";
  if (cc >= 90 && cc < 110 && rules.mxfp4_triton_kernels) return "triton";
  return "marlin";
}

}  // namespace vramfit
