// SGLang's per-rank weights (see weights.h).
#include "engines/sglang/weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "core/checked.h"

namespace vramfit::sglang {
namespace {

// How a tensor of each role lies on the ranks.
enum class Lay { kTp, kAttnTp, kWhole, kMtp };

Lay LayOf(Role r) {
  switch (r) {
    // QKVParallelLinear / RowParallelLinear under the attention TP group (dp_attention.py
    // get_attention_tp_size): q, k, v and o, MLA's projections, linear attention's.
    case Role::kAttnProj:
    case Role::kMlaProj:
    case Role::kLinearAttnProj:
    case Role::kLinearAttnState:
    case Role::kAttnSinks:
      return Lay::kAttnTp;
    // Merged/Row parallel MLPs, FusedMoE (sliced by TP or split whole by EP: a rank holds
    // 1/tp of the experts' bytes either way), VocabParallelEmbedding and ParallelLMHead.
    case Role::kMlpProj:
    case Role::kExpertProj:
    case Role::kSharedExpertProj:
    case Role::kEmbedding:
    case Role::kLmHead:
      return Lay::kTp;
    case Role::kMtp:
      return Lay::kMtp;
    // Norms, routers and gates, and the vision tower, counted whole on every rank (the towers
    // SGLang shards are planned unsharded: the safe side).
    default:
      return Lay::kWhole;
  }
}

bool IsProjection(Role r) {
  return r == Role::kAttnProj || r == Role::kMlaProj || r == Role::kLinearAttnProj ||
         r == Role::kMlpProj || r == Role::kExpertProj || r == Role::kSharedExpertProj;
}

}  // namespace

Result<SglangWeights> WeightsPerRank(const Inventory& inv, const WeightOptions& o) {
  const uint64_t tp = static_cast<uint64_t>(std::max<int64_t>(1, o.tensor_parallel_size));
  const uint64_t atp = static_cast<uint64_t>(std::max<int64_t>(1, o.attention_tp_size));
  const int64_t pp = std::max<int64_t>(1, o.pipeline_parallel_size);
  const int64_t layers = static_cast<int64_t>(inv.spec.layers.size());
  // Online FP8 (quantization/fp8.py Fp8LinearMethod without a serialized FP8 checkpoint): the
  // projections are created and loaded in 16 bits, and process_weights_after_loading turns each
  // module into FP8 weights (1 byte) with a per-tensor scale after the whole model is loaded:
  // the load peaks at the 16-bit model and one module's FP8 copy.
  const bool online_fp8 = o.quantization == "fp8" && !inv.spec.quant.quantized();
  if (!o.quantization.empty() && inv.spec.quant.quantized() && o.quantization == "fp8" &&
      inv.spec.quant.method != QuantMethod::kFp8) {
    return Status::InvalidArgument(fmt::format(
        "--quantization fp8 does not match the checkpoint's quantization ({}); SGLang's "
        "model_config refuses a method that differs from the config's",
        inv.quantization.method));
  }
  // Layer tensors by pipeline stage (PPProxy: layers split evenly, the first stages taking
  // the remainder): the largest stage holds ceil(layers / pp) layers; the planned rank is
  // charged the embedding and the LM head both (first and last stage alike: the safe side).
  const int64_t stage_layers = (layers + pp - 1) / pp;
  uint64_t per_layer_bytes = 0, outside_bytes = 0, fp8_saved = 0, largest_projection = 0;
  uint64_t mtp = 0;
  for (const TensorEntry& t : inv.tensors) {
    Lay lay = LayOf(t.role);
    // MLA's down-projections (q_a_proj, kv_a_proj_with_mqa) are ReplicatedLinear on every rank
    // (models/deepseek_v2.py DeepseekV2AttentionMLA); q_b, kv_b and o are sharded.
    if (t.role == Role::kMlaProj && (t.module().ends_with("q_a_proj") ||
                                     t.module().ends_with("kv_a_proj_with_mqa") ||
                                     t.module().ends_with("kv_a_proj"))) {
      lay = Lay::kWhole;
    }
    const uint64_t div = lay == Lay::kTp ? tp : lay == Lay::kAttnTp ? atp : 1;
    uint64_t b = core::CeilDiv(t.info.bytes(), div);
    if (online_fp8 && IsProjection(t.role) && t.part == Part::kWeight && !t.quantized) {
      largest_projection = std::max(largest_projection, b);
      fp8_saved += b - b / 2;
    }
    if (lay == Lay::kMtp) {
      mtp += core::CeilDiv(t.info.bytes(), tp);
    } else if (t.layer >= 0 && t.layer < layers) {
      per_layer_bytes += b;
    } else {
      outside_bytes += b;
    }
  }
  SglangWeights w;
  const uint64_t stage_share =
      layers > 0 ? per_layer_bytes / static_cast<uint64_t>(layers) *
                       static_cast<uint64_t>(stage_layers)
                 : 0;
  uint64_t loaded = stage_share + outside_bytes;
  w.mtp_bytes = mtp;
  w.kernel = inv.spec.quant.quantized() ? "checkpoint's " + inv.quantization.method
                                        : "unquantized";
  w.load_peak_per_rank = loaded;
  if (online_fp8) {
    const uint64_t saved = pp > 1 ? fp8_saved / static_cast<uint64_t>(pp) : fp8_saved;
    w.bytes_per_rank = loaded - std::min(loaded, saved);
    w.transient_reason = "online FP8: every projection is loaded in 16 bits and quantized once "
                         "the whole model is loaded";
    w.kernel = "fp8 (online)";
    // Each module's FP8 copy is made while its 16-bit weight is still held.
    w.load_peak_per_rank = loaded + largest_projection / 2;
  } else {
    w.bytes_per_rank = loaded;
  }
  return w;
}

}  // namespace vramfit::sglang
