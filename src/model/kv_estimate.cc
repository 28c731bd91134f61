// The engine-neutral KV calculator (include/vramfit/kv.h): the per-layer formulas of
// kv_state.h summed over the layers, for a context and a batch, nothing paged or padded.
#include <fmt/format.h>

#include <algorithm>

#include "core/checked.h"
#include "model/kv_state.h"
#include "vramfit/kv.h"

namespace vramfit {
namespace {

// Upper bounds that keep every product below 2^64 (a layer count of a real model is < 1,000,
// heads < 1,000, head_dim < 10,000; a context < 2^31 as engines hold token counts).
constexpr int64_t kMaxLayers = 100'000;
constexpr int64_t kMaxHeads = 100'000;
constexpr int64_t kMaxDim = 1'000'000;
constexpr int64_t kMaxTokens = int64_t{1} << 31;
constexpr int64_t kMaxBatch = 1'000'000;

Status Range(const char* flag, int64_t v, int64_t lo, int64_t hi) {
  if (v >= lo && v <= hi) return Status::Ok();
  return Status::InvalidArgument(fmt::format("{} {}: expected {} to {}", flag, v, lo, hi));
}

Result<uint64_t> ElemBytes(const std::string& dtype, Dtype model) {
  if (dtype == "auto") return static_cast<uint64_t>(DtypeBits(model) / 8);
  if (dtype.rfind("fp8", 0) == 0) return uint64_t{1};
  if (dtype == "bfloat16" || dtype == "float16" || dtype == "half" || dtype == "bf16" ||
      dtype == "fp16") {
    return uint64_t{2};
  }
  if (dtype == "float32" || dtype == "float") return uint64_t{4};
  return Status::InvalidArgument(fmt::format(
      "--kv-cache-dtype \"{}\": expected auto, fp8, bfloat16, float16 or float32", dtype));
}

}  // namespace

Result<KvEstimate> EstimateKv(const ModelSpec& spec, const KvQuery& q) {
  VRAMFIT_RETURN_IF_ERROR(Range("--context", q.context, 1, kMaxTokens));
  VRAMFIT_RETURN_IF_ERROR(Range("--batch", q.batch, 1, kMaxBatch));
  VRAMFIT_RETURN_IF_ERROR(Range("--tensor-parallel-size", q.tensor_parallel_size, 1, 4096));
  auto elem = ElemBytes(q.kv_cache_dtype, spec.dtype);
  if (!elem.ok()) return elem.status();
  KvEstimate e;
  e.elem_bytes = *elem;
  const uint64_t tp = static_cast<uint64_t>(q.tensor_parallel_size);
  const uint64_t context = static_cast<uint64_t>(q.context);
  for (const LayerSpec& l : spec.layers) {
    const AttentionSpec& a = l.attention;
    ++e.layers;
    if (a.kv_shared) {  // reads an earlier layer's K/V (Gemma 4): no cache of its own
      ++e.shared_layers;
      continue;
    }
    switch (a.kind) {
      case AttentionKind::kFull:
        ++e.full_layers;
        e.bytes_per_token += KvBytesPerToken(a, tp, e.elem_bytes);
        break;
      case AttentionKind::kSliding: {
        ++e.sliding_layers;
        const uint64_t window = a.sliding_window > 0
                                    ? std::min(context, static_cast<uint64_t>(a.sliding_window))
                                    : context;
        e.sliding_bytes_per_sequence += KvBytesPerToken(a, tp, e.elem_bytes) * window;
        break;
      }
      case AttentionKind::kMla:
        ++e.mla_layers;
        e.bytes_per_token += MlaBytesPerToken(a, e.elem_bytes);
        break;
      case AttentionKind::kLinear: {
        ++e.linear_layers;
        auto s = LinearAttentionState(a, tp, 0, spec.dtype, spec.ssm_state_dtype);
        if (!s.ok()) return s.status();
        e.state_bytes_per_sequence += s->total();
        break;
      }
    }
  }
  uint64_t seq = 0;
  if (!core::CheckedMul(e.bytes_per_token, context, &seq) ||
      !core::CheckedAdd(seq, e.sliding_bytes_per_sequence, &seq) ||
      !core::CheckedAdd(seq, e.state_bytes_per_sequence, &seq) ||
      !core::CheckedMul(seq, static_cast<uint64_t>(q.batch), &e.total_bytes)) {
    return Status::InvalidArgument("the KV cache of these dimensions passes 2^64 bytes");
  }
  e.bytes_per_sequence = seq;
  return e;
}

Result<ModelSpec> KvSpecFromDimensions(const KvDimensions& d) {
  VRAMFIT_RETURN_IF_ERROR(Range("--layers", d.layers, 1, kMaxLayers));
  ModelSpec spec;
  spec.architecture = "dimensions";
  spec.dtype = d.dtype;
  LayerSpec layer;
  AttentionSpec& a = layer.attention;
  if (d.mla_rank > 0) {
    VRAMFIT_RETURN_IF_ERROR(Range("--mla-rank", d.mla_rank, 1, kMaxDim));
    VRAMFIT_RETURN_IF_ERROR(Range("--rope-dim", d.rope_dim, 0, kMaxDim));
    a.kind = AttentionKind::kMla;
    a.kv_lora_rank = d.mla_rank;
    a.qk_rope_head_dim = d.rope_dim;
  } else {
    VRAMFIT_RETURN_IF_ERROR(Range("--kv-heads", d.kv_heads, 1, kMaxHeads));
    VRAMFIT_RETURN_IF_ERROR(Range("--head-dim", d.head_dim, 1, kMaxDim));
    VRAMFIT_RETURN_IF_ERROR(Range("--window", d.window, 0, kMaxTokens));
    a.kind = d.window > 0 ? AttentionKind::kSliding : AttentionKind::kFull;
    a.num_kv_heads = a.num_heads = d.kv_heads;
    a.head_dim = d.head_dim;
    a.sliding_window = d.window;
  }
  spec.layers.assign(static_cast<size_t>(d.layers), layer);
  return spec;
}

}  // namespace vramfit
