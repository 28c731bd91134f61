// vLLM KV cache layout and capacity (see vramfit/kv_cache.h). Modelled on vLLM's V1 engine;
// source anchors from ../shared/reference/vllm-memory.md §4 (upstream commits b77c7d327
// ~v0.10.0 through 9aaf83ef5 ~v0.22-dev):
//   vllm/v1/kv_cache_interface.py   page sizes and per-request usage of each spec
//   vllm/v1/core/kv_cache_utils.py  grouping, page unification, block count, concurrency, report
//   vllm/platforms/interface.py     _align_hybrid_block_size (hybrid attention + mamba)
//   vllm/model_executor/layers/mamba/mamba_utils.py  gated_delta_net_state_shape, state dtypes
#include "engines/vllm/kv_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "core/checked.h"
#include "core/units.h"
#include "model/kv_state.h"

namespace vramfit {
namespace {

using core::CeilDiv;

constexpr int64_t kHybridAlign =
    16;  // FlashAttention's kernel block size (_align_hybrid_block_size)

// PR #38378 (2026-04-02): int8 or fp8 values with a float32 scale per token and KV head, for K
// and V, carved from the same page (kv_cache_interface.py AttentionSpec.page_size_bytes:
// + 2 x block_size x num_kv_heads x 4).
bool PerTokenHeadScales(const std::string& kv) {
  return kv == "int8_per_token_head" || kv == "fp8_per_token_head";
}

// TurboQuant presets (model_executor/layers/quantization/turboquant/config.py TQ_PRESETS, read
// at 0.22; PR #38479, 2026-04-15): keys as FP8 (8) or Lloyd-Max indices of 3-4 bits plus an fp16
// norm, values as 3-4-bit uniform codes plus an fp16 scale and zero, K and V packed into one
// slot per token and KV head, rounded up to an even size (slot_size_aligned).
struct TqPreset {
  std::string_view name;
  uint64_t key_bits, value_bits;
};
constexpr TqPreset kTqPresets[] = {{"turboquant_k8v4", 8, 4},
                                   {"turboquant_4bit_nc", 4, 4},
                                   {"turboquant_k3v4_nc", 3, 4},
                                   {"turboquant_3bit_nc", 3, 3}};
const TqPreset* FindTq(const std::string& kv) {
  for (const TqPreset& p : kTqPresets) {
    if (kv == p.name) return &p;
  }
  return nullptr;
}
uint64_t TqSlotBytes(const TqPreset& p, uint64_t head_dim) {
  const uint64_t key = p.key_bits == 8 ? head_dim : CeilDiv(head_dim * p.key_bits, 8) + 2;
  const uint64_t value = CeilDiv(head_dim * p.value_bits, 8) + 4;
  const uint64_t slot = key + value;
  return slot + slot % 2;
}
// NVFP4 (PR #37332 and #40177, 2026-04-17 and 04-30): FP4 values two per byte and an FP8 scale
// per 16, for K and V (vllm/utils/torch_utils.py nvfp4_kv_cache_full_dim).
uint64_t Nvfp4BytesPerToken(const AttentionSpec& a, uint64_t tp) {
  const uint64_t d = static_cast<uint64_t>(a.head_dim);
  return KvHeadsPerRank(a, tp) * 2 * (d / 2 + d / 16);
}

Result<uint64_t> KvDtypeBytes(const std::string& kv, Dtype model) {
  if (kv == "auto") return static_cast<uint64_t>(DtypeBits(model) / 8);
  if (kv == "fp8" || kv == "fp8_e4m3" || kv == "fp8_e5m2" || kv == "fp8_inc") return uint64_t{1};
  if (PerTokenHeadScales(kv)) return uint64_t{1};
  // uint8 storage (STR_DTYPE_TO_TORCH_DTYPE); the page sizes are computed on their own below.
  if (FindTq(kv) != nullptr || kv == "nvfp4" || kv == "fp8_ds_mla") return uint64_t{1};
  if (kv == "bfloat16" || kv == "float16" || kv == "half") return uint64_t{2};
  if (kv == "float32" || kv == "float") return uint64_t{4};
  return Status::InvalidArgument(fmt::format(
      "--kv-cache-dtype \"{}\": expected auto, fp8, fp8_e4m3, fp8_e5m2, int8_per_token_head, "
      "fp8_per_token_head, nvfp4, turboquant_k8v4, turboquant_4bit_nc, turboquant_k3v4_nc, "
      "turboquant_3bit_nc, fp8_ds_mla (MLA), bfloat16 or float16",
      kv));
}

// Per-request usage of a layer at block size `bs` (kv_cache_interface.py max_memory_usage_bytes).
uint64_t MaxUsage(KvLayerKind kind, uint64_t page, int64_t bs, int64_t window,
                  const KvCacheOptions& o) {
  const uint64_t len = static_cast<uint64_t>(o.max_model_len);
  switch (kind) {
    case KvLayerKind::kFull:
    case KvLayerKind::kMla: {
      // FullAttentionSpec / MLAAttentionSpec: cdiv(max_model_len, block_size) pages; under
      // decode context parallelism each rank keeps cdiv(max_model_len, dcp) of the tokens
      // (FullAttentionSpec.max_memory_usage_bytes, "each dcp rank only need save
      // (max_model_len//dcp_world_size) tokens locally").
      const uint64_t dcp = static_cast<uint64_t>(o.decode_context_parallel_size);
      return CeilDiv(CeilDiv(len, dcp), bs) * page;
    }
    case KvLayerKind::kSliding: {
      // SlidingWindowSpec: the window plus one scheduler step of tokens, plus one block.
      const uint64_t tokens = std::min<uint64_t>(window - 1 + o.max_num_batched_tokens, len);
      return (CeilDiv(tokens, bs) + 1) * page;
    }
    case KvLayerKind::kMamba:
      // MambaSpec.max_memory_usage_bytes (vllm/v1/kv_cache_interface.py): one page per request
      // in mamba_cache_mode "none" (prefix caching off), two in "align" (PR #30877, 2026-01),
      // plus one per speculative token.
      return page * static_cast<uint64_t>(o.mamba_pages_per_request + o.num_speculative_tokens);
  }
  return 0;
}

struct Key {
  KvLayerKind kind;
  uint64_t page;
  int64_t bs;
  int64_t window;
  int64_t kv_heads;
  bool operator<(const Key& o) const {
    return std::tie(kind, page, bs, window, kv_heads) <
           std::tie(o.kind, o.page, o.bs, o.window, o.kv_heads);
  }
  bool operator==(const Key& o) const { return !(*this < o) && !(o < *this); }
};

Key KeyOf(const KvLayerSpec& l) {
  return {l.kind, l.page_bytes, l.block_size, l.sliding_window, l.kv_heads};
}

}  // namespace

Result<KvCacheLayout> PlanKvCache(const ModelSpec& spec, const KvCacheOptions& o) {
  if (o.max_model_len <= 0) {
    return Status::InvalidArgument(
        fmt::format("--max-model-len must be positive, got {}", o.max_model_len));
  }
  if (o.tensor_parallel_size <= 0) {
    return Status::InvalidArgument(
        fmt::format("--tensor-parallel-size must be positive, got {}", o.tensor_parallel_size));
  }
  if (o.block_size < 0 || o.max_num_batched_tokens <= 0 || o.num_speculative_tokens < 0) {
    return Status::InvalidArgument(
        "--block-size, --max-num-batched-tokens and speculative tokens must be positive");
  }
  if (o.decode_context_parallel_size <= 0) {
    return Status::InvalidArgument(
        fmt::format("--decode-context-parallel-size must be positive, got {}",
                    o.decode_context_parallel_size));
  }
  const uint64_t tp = static_cast<uint64_t>(o.tensor_parallel_size);
  auto kvb = KvDtypeBytes(o.kv_cache_dtype, spec.dtype);
  if (!kvb.ok()) return kvb.status();
  const uint64_t b = *kvb;
  const bool mla = spec.CountAttention(AttentionKind::kMla) > 0;
  const bool scales = PerTokenHeadScales(o.kv_cache_dtype);
  if (scales && !o.rules.kv_per_token_head_quant) {
    return Status::InvalidArgument(fmt::format(
        "--kv-cache-dtype {}: per-token-head KV quantization came with PR #38378 (2026-04-02), "
        "planned from vLLM 0.20",
        o.kv_cache_dtype));
  }
  const TqPreset* tq = FindTq(o.kv_cache_dtype);
  const bool nvfp4 = o.kv_cache_dtype == "nvfp4";
  const bool hybrid = spec.CountAttention(AttentionKind::kLinear) > 0;
  if ((tq != nullptr || nvfp4) && mla) {
    // MLA layers take neither (TurboQuant's tracking issue #40069 lists MLA as not supported;
    // NVFP4's pages are the K/V layout of FlashInfer's backend).
    return Status::Unsupported(fmt::format(
        "--kv-cache-dtype {}: an MLA model's latent cache is not planned in this format",
        o.kv_cache_dtype));
  }
  if ((tq != nullptr && !o.rules.kv_turboquant) || (nvfp4 && !o.rules.kv_nvfp4)) {
    return Status::InvalidArgument(fmt::format(
        "--kv-cache-dtype {}: {}", o.kv_cache_dtype,
        tq != nullptr ? "TurboQuant KV came with PR #38479 (2026-04-15), planned from vLLM 0.20"
                      : "the NVFP4 KV cache came with PR #40177 (2026-04-30), planned from "
                        "vLLM 0.21"));
  }
  if (tq != nullptr && hybrid && !o.rules.kv_turboquant_hybrid) {
    return Status::InvalidArgument(fmt::format(
        "--kv-cache-dtype {}: TurboQuant on hybrid (linear-attention) models came with PR #39931 "
        "(2026-05-05), planned from vLLM 0.21",
        o.kv_cache_dtype));
  }
  // TurboQuant keeps the first and last two decoder layers of a model without linear-attention
  // layers in the model's dtype (TurboQuantConfig.get_boundary_skip_layers, n = 2, at most half
  // the layers; EngineArgs.create_engine_config adds them to kv_cache_dtype_skip_layers, and
  // Attention.__init__ gives a skipped layer kv_cache_dtype "auto").
  const int64_t n_layers = static_cast<int64_t>(spec.layers.size());
  const int64_t tq_skip = tq != nullptr && !hybrid ? std::min<int64_t>(2, n_layers / 2) : 0;
  const uint64_t model_bytes = static_cast<uint64_t>(DtypeBits(spec.dtype) / 8);
  // The linear-attention state's dtypes (mamba_utils.py MambaStateDtypeCalculator
  // _mamba_state_dtype; models/config.py Qwen3_5ForConditionalGenerationConfig sets an "auto"
  // --mamba-ssm-cache-dtype to the config's mamba_ssm_dtype), read at 0.22.
  auto mamba_dtype = [](const std::string& text, Dtype fallback) {
    return text == "float32" ? Dtype::kF32
           : text == "float16" ? Dtype::kF16
           : text == "bfloat16" ? Dtype::kBF16
                                : fallback;
  };
  const Dtype conv_dtype = mamba_dtype(o.mamba_cache_dtype, spec.dtype);
  const bool config_ssm = spec.ssm_state_dtype != spec.dtype;
  const Dtype ssm_dtype =
      mamba_dtype(o.mamba_ssm_cache_dtype, config_ssm ? spec.ssm_state_dtype : conv_dtype);
  const int64_t bs0 =
      o.block_size > 0 ? o.block_size : (mla ? o.mla_block_size : vllm::kDefaultBlockSize);

  KvCacheLayout out;
  int64_t attn_heads = 0;
  uint64_t attn_1tok = 0;  // full-attention page for one token (bs = 1)
  // Pipeline parallelism: each stage caches only its layers; the largest stage (ceil(n / pp)
  // layers, the first) has the fewest blocks, and vLLM takes the minimum over workers.
  if (o.pipeline_parallel_size <= 0)
    return Status::InvalidArgument("--pipeline-parallel-size must be positive");
  const size_t stage_layers = static_cast<size_t>(
      CeilDiv(spec.layers.size(), static_cast<uint64_t>(o.pipeline_parallel_size)));
  for (size_t i = 0; i < spec.layers.size() && i < stage_layers; ++i) {
    const AttentionSpec& a = spec.layers[i].attention;
    // A layer with kv_sharing_target_layer_name (Gemma 4's KV-shared tail) gets no
    // KVCacheSpec and no cache (gpu_model_runner.py get_kv_cache_spec, read at 0.19).
    if (a.kv_shared) {
      attn_heads = a.num_heads;
      continue;
    }
    KvLayerSpec l;
    l.layer = static_cast<int64_t>(i);
    l.block_size = bs0;
    switch (a.kind) {
      case AttentionKind::kFull:
      case AttentionKind::kSliding: {
        // ModelConfig.get_num_kv_heads: KV heads per rank, replicated when TP exceeds them.
        // K and V, and with per-token-head quantization their float32 scales.
        const int64_t idx = static_cast<int64_t>(i);
        // The user's skip list (Attention.__init__, model_executor/layers/attention/
        // attention.py, read at 0.22): a layer of a listed index, or any sliding-window layer
        // under "sliding_window", gets kv_cache_dtype "auto"; MLA layers are not Attention's.
        const auto& skip = o.kv_skip_layers;
        const bool user_skipped =
            std::find(skip.begin(), skip.end(), std::to_string(idx)) != skip.end() ||
            (a.kind == AttentionKind::kSliding &&
             std::find(skip.begin(), skip.end(), "sliding_window") != skip.end());
        const bool model_dtype =
            (tq != nullptr && (idx < tq_skip || idx >= n_layers - tq_skip)) ||
            (user_skipped && o.kv_cache_dtype != "auto");
        uint64_t one =
            KvBytesPerToken(a, tp, b) + (scales ? 2 * KvHeadsPerRank(a, tp) * 4 : 0);
        if (model_dtype) {
          one = KvBytesPerToken(a, tp, model_bytes);
        } else if (nvfp4) {
          one = Nvfp4BytesPerToken(a, tp);
        } else if (tq != nullptr && a.kind == AttentionKind::kFull) {
          // TQFullAttentionSpec: block_size x KV heads x slot bytes. A sliding-window layer
          // keeps SlidingWindowSpec's K/V pages in the uint8 storage type.
          one = KvHeadsPerRank(a, tp) * TqSlotBytes(*tq, static_cast<uint64_t>(a.head_dim));
        }
        attn_1tok = std::max(attn_1tok, one);
        attn_heads = a.num_heads;
        l.kind = a.kind == AttentionKind::kSliding && !o.disable_hybrid_kv_cache_manager
                     ? KvLayerKind::kSliding
                     : KvLayerKind::kFull;
        l.sliding_window = l.kind == KvLayerKind::kSliding ? a.sliding_window : 0;
        l.kv_heads = static_cast<int64_t>(KvHeadsPerRank(a, tp));
        l.page_bytes = one * static_cast<uint64_t>(bs0);
        out.kv_bytes_per_token += one;
        break;
      }
      case AttentionKind::kMla: {
        // MLAAttentionSpec: one latent of kv_lora_rank + qk_rope_head_dim, no K/V pair, not
        // sharded by TP.
        // fp8_ds_mla (DeepSeek V3.2's FlashMLA sparse layout, MLAAttentionSpec
        // real_page_size_bytes): 512 FP8 latent values, four float32 scales and the 64 RoPE
        // dims in bf16, 656 B a token.
        const uint64_t one =
            o.kv_cache_dtype == "fp8_ds_mla" ? uint64_t{656} : MlaBytesPerToken(a, b);
        attn_heads = a.num_heads;
        l.kind = KvLayerKind::kMla;
        l.page_bytes = one * static_cast<uint64_t>(bs0);
        out.kv_bytes_per_token += one;
        break;
      }
      case AttentionKind::kLinear: {
        // gated_delta_net_state_shape (src/model/kv_state.h): conv + recurrent state.
        auto st = LinearAttentionState(a, tp, o.num_speculative_tokens, conv_dtype, ssm_dtype);
        if (!st.ok()) return st.status();
        const uint64_t conv = st->conv_bytes, ssm = st->recurrent_bytes;
        l.kind = KvLayerKind::kMamba;
        l.page_bytes = conv + ssm;
        out.state_bytes_per_sequence += conv + ssm;
        break;
      }
    }
    out.layers.push_back(l);
  }
  if (!o.allow_uneven_heads && attn_heads > 0 && attn_heads % static_cast<int64_t>(tp) != 0) {
    // vllm/config/model.py verify_with_parallel_config.
    return Status::InvalidArgument(fmt::format(
        "Total number of attention heads ({}) must be divisible by tensor parallel size ({}).",
        attn_heads, tp));
  }
  if (out.layers.empty()) return out;

  // Hybrid attention + mamba: raise the attention block size until an attention page holds a
  // mamba page, then pad the mamba page to the attention page (_align_hybrid_block_size).
  int64_t bs = bs0;
  const bool has_mamba =
      std::any_of(out.layers.begin(), out.layers.end(),
                  [](const KvLayerSpec& l) { return l.kind == KvLayerKind::kMamba; });
  if (has_mamba && attn_1tok > 0) {
    uint64_t mamba_page = 0;
    for (const auto& l : out.layers)
      if (l.kind == KvLayerKind::kMamba) mamba_page = std::max(mamba_page, l.page_bytes);
    const uint64_t align = std::max<int64_t>(kHybridAlign, bs0);
    const int64_t attn_block = static_cast<int64_t>(align * CeilDiv(mamba_page, align * attn_1tok));
    if (attn_block > bs) {
      bs = attn_block;
      out.notes.push_back(
          fmt::format("Setting attention block size to {} tokens to ensure that attention page "
                      "size is >= mamba page size.",
                      bs));
    }
    const uint64_t page = static_cast<uint64_t>(bs) * attn_1tok;
    if (page > mamba_page) {
      out.notes.push_back(
          fmt::format("Padding mamba page size by {:.2f}% to ensure that mamba page size and "
                      "attention page size are exactly equal.",
                      100.0 * (page - mamba_page) / mamba_page));
    }
    for (auto& l : out.layers) {
      l.block_size = bs;
      l.page_bytes =
          l.kind == KvLayerKind::kMamba ? page : l.page_bytes / static_cast<uint64_t>(bs0) * bs;
    }
  }
  out.block_size = bs;

  // Grouping (get_kv_cache_groups).
  const Key first = KeyOf(out.layers.front());
  const bool all_same = std::all_of(out.layers.begin(), out.layers.end(),
                                    [&](const KvLayerSpec& l) { return KeyOf(l) == first; });
  const bool same_type = std::all_of(out.layers.begin(), out.layers.end(),
                                     [&](const KvLayerSpec& l) { return l.kind == first.kind; });
  for (auto& l : out.layers)
    l.max_usage_bytes = MaxUsage(l.kind, l.page_bytes, l.block_size, l.sliding_window, o);
  if (all_same || same_type) {
    std::vector<int64_t> all;
    for (const auto& l : out.layers) all.push_back(l.layer);
    out.groups.push_back(all);
    out.group_size = static_cast<int64_t>(all.size());
    out.uniform_type = !all_same;
    out.page_bytes = first.page;
    if (out.uniform_type) {
      out.page_bytes = 0;  // UniformTypeKVCacheSpecs: one block holds every layer's page
      for (const auto& l : out.layers) out.page_bytes += l.page_bytes;
    }
    return out;
  }
  // (a) unify_kv_cache_spec_page_size: smaller pages must divide the largest; their block
  // size grows by the ratio.
  uint64_t max_page = 0;
  for (const auto& l : out.layers) max_page = std::max(max_page, l.page_bytes);
  for (auto& l : out.layers) {
    if (l.page_bytes == max_page) continue;
    if (l.page_bytes == 0 || max_page % l.page_bytes != 0) {
      return Status::Unsupported(
          fmt::format("layer {}: its KV page ({} B) does not divide the largest page ({} B); vLLM "
                      "cannot build a "
                      "hybrid KV cache for this model with these settings",
                      l.layer, l.page_bytes, max_page));
    }
    l.block_size *= static_cast<int64_t>(max_page / l.page_bytes);
    l.page_bytes = max_page;
    l.max_usage_bytes = MaxUsage(l.kind, l.page_bytes, l.block_size, l.sliding_window, o);
  }
  // (b) _get_kv_cache_groups_uniform_page_size: bucket identical specs; group size is the
  // smallest bucket unless the largest is under 1.5x of it; buckets split, layers strided.
  std::map<Key, std::vector<int64_t>> buckets;
  for (const auto& l : out.layers) buckets[KeyOf(l)].push_back(l.layer);
  size_t min_n = SIZE_MAX, max_n = 0;
  for (const auto& [k, v] : buckets) {
    min_n = std::min(min_n, v.size());
    max_n = std::max(max_n, v.size());
  }
  // The "close enough, use the largest" rule: 1.5x since PR #36684 (2026-03-12, ~v0.18),
  // 1.25x before it, none in v0.10 (Rules::group_close_enough_percent).
  size_t group_size = min_n;
  const size_t pct = static_cast<size_t>(o.rules.group_close_enough_percent);
  if (pct > 0 && max_n * 100 < min_n * pct) group_size = max_n;
  for (const auto& [k, v] : buckets) {
    const size_t n_groups = CeilDiv(v.size(), group_size);
    const size_t padding = n_groups * group_size - v.size();
    if (padding > 0) {  // one warning per bucket, as vLLM logs it
      out.notes.push_back(
          fmt::format("Add {} padding layers, may waste at most {:.2f}% KV cache memory", padding,
                      100.0 * padding / v.size()));
    }
    for (size_t g = 0; g < n_groups; ++g) {
      std::vector<int64_t> members;
      if (o.rules.strided_kv_groups) {  // strided: layers[g::n_groups]
        for (size_t i = g; i < v.size(); i += n_groups) members.push_back(v[i]);
      } else {                       // v0.10: contiguous slices
        for (size_t i = g * group_size; i < v.size() && i < (g + 1) * group_size; ++i)
          members.push_back(v[i]);
      }
      out.groups.push_back(std::move(members));
    }
  }
  out.group_size = static_cast<int64_t>(group_size);
  out.page_bytes = max_page;
  return out;
}

uint64_t KvBlockBytes(const KvCacheLayout& layout) {
  return layout.uniform_type ? layout.page_bytes
                             : layout.page_bytes * static_cast<uint64_t>(layout.group_size);
}

KvCapacityResult KvCapacity(const KvCacheLayout& layout, uint64_t available_bytes,
                            const KvCacheOptions& o) {
  KvCapacityResult r;
  if (layout.layers.empty() || layout.page_bytes == 0) {
    r.num_blocks = 1;  // attention-free models: vLLM allocates one dummy block
    return r;
  }
  const uint64_t lg = static_cast<uint64_t>(layout.group_size);
  // get_num_blocks: available / page / layers-per-group (UniformTypeKVCacheSpecs: / sum of pages).
  r.num_blocks = layout.uniform_type ? available_bytes / layout.page_bytes
                                     : available_bytes / layout.page_bytes / lg;
  r.allocated_bytes = r.num_blocks * layout.page_bytes * (layout.uniform_type ? 1 : lg);
  // get_max_concurrency_for_kv_cache_config: Lg x sum over groups of one layer's usage, in
  // blocks of page x Lg.
  uint64_t per_req = 0;
  for (const auto& g : layout.groups) {
    if (layout.uniform_type) {
      for (int64_t i : g) per_req += layout.layers[static_cast<size_t>(i)].max_usage_bytes;
      continue;
    }
    const auto it = std::find_if(layout.layers.begin(), layout.layers.end(),
                                 [&](const KvLayerSpec& l) { return l.layer == g.front(); });
    per_req += lg * it->max_usage_bytes;
  }
  const uint64_t block_bytes = KvBlockBytes(layout);
  r.bytes_per_request = per_req;
  r.blocks_per_request = CeilDiv(per_req, block_bytes);
  r.max_concurrency =
      r.blocks_per_request ? static_cast<double>(r.num_blocks) / r.blocks_per_request : 0;
  // _report_kv_cache_config: before v0.20.1 (PR #41069) tokens were blocks x block size, divided
  // by the number of groups for hybrid models; since then max_concurrency x max_model_len.
  int64_t min_bs = INT64_MAX;
  for (const auto& l : layout.layers) min_bs = std::min(min_bs, l.block_size);
  if (o.rules.tokens_from_concurrency) {
    r.kv_cache_tokens =
        static_cast<uint64_t>(r.max_concurrency * static_cast<double>(o.max_model_len));
  } else if (layout.groups.size() <= 1) {
    // PR #23734 (v0.10.2): "Multiplying the GPU KV cache size by the dcp_world_size N."
    r.kv_cache_tokens = r.num_blocks * static_cast<uint64_t>(layout.block_size) *
                        static_cast<uint64_t>(o.decode_context_parallel_size);
  } else {
    r.kv_cache_tokens = r.num_blocks / layout.groups.size() * static_cast<uint64_t>(min_bs);
  }
  return r;
}

}  // namespace vramfit
