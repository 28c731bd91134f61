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
#include "vramfit/vllm_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "core/checked.h"
#include "model/roles.h"

namespace vramfit {
namespace {

using core::CeilDiv;

std::string Leaf(const std::string& module) {
  const size_t dot = module.rfind('.');
  return dot == std::string::npos ? module : module.substr(dot + 1);
}

bool IsRowParallel(const std::string& leaf) {
  return leaf == "o_proj" || leaf == "down_proj" || leaf == "w2" || leaf == "out_proj" || leaf == "dense" ||
         leaf == "proj" || leaf == "fc2" || leaf == "linear_fc2" || leaf == "c_proj" || leaf == "wo";
}

}  // namespace

Result<VllmWeights> VllmWeightsPerRank(const Inventory& inv, const VllmWeightOptions& o) {
  if (o.tensor_parallel_size <= 0 || o.data_parallel_size <= 0) {
    return Status::InvalidArgument("tensor and data parallel sizes must be positive");
  }
  const uint64_t tp = static_cast<uint64_t>(o.tensor_parallel_size);
  const uint64_t ep = o.enable_expert_parallel ? tp * static_cast<uint64_t>(o.data_parallel_size) : 1;
  const ModelSpec& spec = inv.spec;
  const QuantScheme& q = spec.quant;
  VllmWeights w;
  const bool gptq_like = q.method == QuantMethod::kGptq;
  const bool awq = q.method == QuantMethod::kAwq;
  w.kernel = !o.quantization.empty() ? o.quantization
             : awq ? (o.marlin ? "awq_marlin" : "awq")
             : gptq_like ? (o.marlin ? "gptq_marlin" : "gptq")
             : q.quantized() ? QuantMethodName(q.method) : "unquantized";
  const bool marlin_gptq = gptq_like && o.marlin;
  const bool marlin_any = o.marlin && (awq || gptq_like || q.layout == QuantLayout::kCtPacked);
  // KV heads of the first attention layer, for QKV replication when TP exceeds them.
  int64_t kv_heads = 0;
  for (const auto& l : spec.layers) {
    if (l.attention.kind == AttentionKind::kFull || l.attention.kind == AttentionKind::kSliding) {
      kv_heads = l.attention.num_kv_heads;
      break;
    }
  }
  const uint64_t kv_rank_heads = kv_heads > 0 ? std::max<uint64_t>(1, static_cast<uint64_t>(kv_heads) / tp) : 0;
  const uint64_t vocab = static_cast<uint64_t>(spec.vocab_size);
  const uint64_t vocab_pad = CeilDiv(vocab, 64) * 64;

  const bool online_fp8 = o.quantization == "fp8" && !q.quantized();
  uint64_t online_fp8_source = 0;  // 16-bit bytes of the linears online FP8 quantizes
  // Module bytes per rank, for the repack transient.
  std::map<std::string, uint64_t> module_rank_bytes;
  uint64_t largest_linear_fp16 = 0;
  for (const TensorEntry& e : inv.tensors) {
    const TensorInfo& t = e.info;
    uint64_t bytes = t.bytes();
    if (e.role == Role::kMtp && !o.load_speculative_mtp) {
      w.skipped_bytes += bytes;
      continue;
    }
    const std::string leaf = Leaf(e.module);
    const std::string part = t.name.substr(e.module.size() < t.name.size() ? e.module.size() + 1 : 0);
    // Quantization metadata vLLM's Marlin path frees after loading.
    if (marlin_gptq && (part == "g_idx" && !q.act_order)) { w.dropped_bytes += bytes; continue; }
    if (marlin_gptq && part == "qzeros" && q.symmetric) { w.dropped_bytes += bytes; continue; }
    uint64_t rank = bytes;
    switch (e.role) {
      case Role::kEmbedding:
      case Role::kLmHead:
        if (!t.shape.empty() && t.shape[0] == vocab && vocab > 0) {
          rank = CeilDiv(vocab_pad, tp) * (bytes / vocab);  // padded vocab rows per rank
        } else {
          rank = CeilDiv(bytes, tp);
        }
        break;
      case Role::kAttnProj:
        if (leaf == "k_proj" || leaf == "v_proj") {
          rank = kv_heads > 0 ? bytes / static_cast<uint64_t>(kv_heads) * kv_rank_heads : CeilDiv(bytes, tp);
        } else if (IsRowParallel(leaf) && e.part == Part::kBias) {
          rank = bytes;  // RowParallelLinear keeps its bias whole
        } else if (IsRowParallel(leaf) && e.part == Part::kQuantMeta && marlin_gptq && q.act_order) {
          rank = bytes;  // marlin_repeat_scales_on_all_ranks
        } else {
          rank = CeilDiv(bytes, tp);
        }
        break;
      case Role::kMlaProj:
        rank = (leaf == "q_a_proj" || leaf == "kv_a_proj_with_mqa") ? bytes : CeilDiv(bytes, tp);
        break;
      case Role::kLinearAttnProj:
      case Role::kMlpProj:
      case Role::kSharedExpertProj:
      case Role::kVision:
      case Role::kProjector:
        if (IsRowParallel(leaf) && e.part == Part::kBias) {
          rank = bytes;
        } else if (e.role == Role::kVision && t.shape.size() < 2) {
          rank = bytes;  // norms and biases of the vision tower
        } else if (IsRowParallel(leaf) && e.part == Part::kQuantMeta && marlin_gptq && q.act_order) {
          rank = bytes;
        } else {
          rank = CeilDiv(bytes, tp);
        }
        break;
      case Role::kExpertProj:
        rank = o.enable_expert_parallel ? CeilDiv(bytes, ep) : CeilDiv(bytes, tp);
        break;
      case Role::kLinearAttnState:
      case Role::kAttnSinks:
        rank = leaf == "norm" ? bytes : CeilDiv(bytes, tp);  // conv1d, A_log, dt_bias, sinks: by heads
        break;
      case Role::kNorm:
      case Role::kRouter:
      case Role::kSharedExpertGate:
      case Role::kMtp:
      case Role::kOther:
        rank = bytes;
        break;
    }
    if (online_fp8 && model::IsCountedLinear(e.role) && e.part == Part::kWeight && IsWideFloat(t.dtype)) {
      online_fp8_source += rank;
      rank = rank * 8 / static_cast<uint64_t>(DtypeBits(t.dtype));  // FP8 E4M3 values
    }
    w.bytes_per_rank += rank;
    if (model::IsCountedLinear(e.role)) {
      // Experts of one layer are repacked as one fused stack (w13, w2).
      std::string key = e.module;
      if (e.role == Role::kExpertProj) {
        const size_t at = key.find("experts.");
        key = key.substr(0, at + 7) + (leaf == "down_proj" || leaf == "w2" ? ".w2" : ".w13");
      }
      if (e.part != Part::kBias) module_rank_bytes[key] += rank;
      if (e.part == Part::kWeight && e.quantized) {
        largest_linear_fp16 = std::max(largest_linear_fp16, e.parameters * 2 / (e.role == Role::kExpertProj ? 1 : tp));
      }
    }
  }
  // Transients while loading.
  if (marlin_any) {
    for (const auto& [m, b] : module_rank_bytes) {
      if (b > w.transient_bytes) {
        w.transient_bytes = b;
        w.transient_reason = fmt::format("Marlin repack of {}", m);
      }
    }
  }
  if (online_fp8) {
    if (o.vllm_version < 1600) {
      // The whole 16-bit model is resident before process_weights_after_loading quantizes it.
      w.transient_bytes = online_fp8_source / 2;
      w.transient_reason = "online FP8 quantization before v0.16 keeps the whole 16-bit model resident";
    } else {
      // Since PR #31914 one layer is materialized in 16 bits at a time.
      uint64_t largest = 0;
      for (const auto& [m, b] : module_rank_bytes) largest = std::max(largest, b);
      w.transient_bytes = largest * 2;
      w.transient_reason = "online FP8 quantization of one layer at a time (v0.16+)";
    }
  }
  if (w.kernel == "awq") w.largest_dequantized_layer = largest_linear_fp16;
  w.load_peak_per_rank = w.bytes_per_rank + w.transient_bytes;
  return w;
}

}  // namespace vramfit
