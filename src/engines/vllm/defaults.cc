// vLLM's defaults (see defaults.h).
#include "engines/vllm/defaults.h"

#include <fmt/format.h>

#include <algorithm>


namespace vramfit::vllm {
namespace {

constexpr uint64_t kLargeGpuBytes = 70ull << 30;
constexpr int64_t kLargeMaxNumSeqs = 1024, kSmallMaxNumSeqs = 256;
constexpr int64_t kLargeBatchedTokens = 8192, kSmallBatchedTokens = 2048;
// From v0.28 (Rules::batch_tier_160gib): devices of 160 GiB or more get 16384.
constexpr uint64_t kLargestGpuBytes = 160ull << 30;
constexpr int64_t kLargestBatchedTokens = 16384;
// V0 (SchedulerConfig of 0.8-0.10): chunked prefill is enabled above this context.
constexpr int64_t kV0ChunkedPrefillAbove = 32768;

}  // namespace

int64_t DerivedMaxModelLen(const ModelSpec& spec) {
  int64_t derived =
      spec.max_position_embeddings > 0 ? spec.max_position_embeddings : kFallbackMaxModelLen;
  // vllm/config/model.py _get_and_verify_max_len: a rope_scaling other than su, longrope and
  // llama3 (which already state their length) scales the derived length by its factor; YaRN
  // scales original_max_position_embeddings. Gemma 3 states its length unscaled.
  const ModelSpec::RopeScaling& r = spec.rope_scaling;
  if (r.factor > 0 && r.type != "su" && r.type != "longrope" && r.type != "llama3" &&
      r.type != "mrope" && r.type != "default" && spec.family != "gemma3") {
    if (r.type == "yarn" && r.original_max_position_embeddings > 0) {
      derived = r.original_max_position_embeddings;
    }
    derived = static_cast<int64_t>(static_cast<double>(derived) * r.factor);
  }
  return derived;
}

std::string MaxLenError(int64_t requested, int64_t derived, std::string_view key) {
  return fmt::format(
      "User-specified max_model_len ({}) is greater than the derived max_model_len "
      "({}={} in model's config.json). To allow overriding this maximum, set "
      "the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.", requested, key, derived);
}

std::string QwenYarnOverride(const ModelSpec& spec, int64_t requested) {
  // vLLM then derives 32,768 x factor (DerivedMaxModelLen).
  constexpr int64_t kBase = 32768;
  constexpr int64_t kMaxFactor = 4;
  const bool qwen = spec.family == "qwen2" || spec.family == "qwen2_moe" ||
                    spec.family == "qwen3" || spec.family == "qwen3_moe";
  if (!qwen || spec.rope_scaling.factor > 0 || requested <= 0 ||
      (spec.max_position_embeddings != kBase && spec.max_position_embeddings != 40960)) {
    return {};
  }
  const int64_t factor = (requested + kBase - 1) / kBase;
  if (factor < 2 || factor > kMaxFactor) return {};
  return fmt::format("{{\"rope_scaling\": {{\"rope_type\": \"yarn\", \"factor\": {}.0, "
                     "\"original_max_position_embeddings\": {}}}}}",
                     factor, kBase);
}

std::string MaxLenWayOut(const ModelSpec& spec, int64_t requested, int64_t derived,
                         bool window_capped) {
  std::string out = fmt::format("--max-model-len {} (the longest vLLM derives here)", derived);
  if (window_capped) out += ", or drop --disable-sliding-window";
  if (const std::string yarn = window_capped ? "" : QwenYarnOverride(spec, requested);
      !yarn.empty()) {
    out += fmt::format(", or Qwen's YaRN (the model card's static scaling; it may cost some "
                       "quality on short prompts): --hf-overrides '{}'",
                       yarn);
  }
  out += fmt::format(", or VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 (vLLM then starts, but positions "
                     "past {} were never trained: outputs there may be wrong)",
                     derived);
  return out;
}

namespace {
// The first full, sliding-window or MLA layer's attention; null for a model with none.
const AttentionSpec* FirstAttention(const ModelSpec& spec) {
  for (const LayerSpec& l : spec.layers) {
    const AttentionKind k = l.attention.kind;
    if (k == AttentionKind::kFull || k == AttentionKind::kSliding || k == AttentionKind::kMla) {
      return &l.attention;
    }
  }
  return nullptr;
}
}  // namespace

int64_t AttentionHeads(const ModelSpec& spec) {
  const AttentionSpec* a = FirstAttention(spec);
  return a ? a->num_heads : 0;
}

TpChoices HeadsTpChoices(const ModelSpec& spec, int64_t tp) {
  constexpr int64_t kLargestTp = 64;
  const AttentionSpec* a = FirstAttention(spec);
  const int64_t heads = a ? a->num_heads : 0;
  const int64_t kv = a && a->kind != AttentionKind::kMla ? a->num_kv_heads : 0;
  TpChoices out;
  for (int64_t d = 1; d <= kLargestTp; d *= 2) {
    const bool ok = heads > 0 && heads % d == 0 &&
                    (kv <= 0 || (kv >= d ? kv % d == 0 : d % kv == 0));
    if (!ok) continue;
    if (d < tp) out.below = d;
    if (d > tp) {
      out.above = d;
      break;
    }
  }
  return out;
}

std::string HeadsWayOut(const ModelSpec& spec, int64_t tp, int64_t pp) {
  const TpChoices c = HeadsTpChoices(spec, tp);
  std::string out = fmt::format("--tensor-parallel-size {}", c.below);
  if (tp % c.below == 0 && c.below < tp) {
    out += fmt::format(" --pipeline-parallel-size {} (the same {} GPUs)", pp * (tp / c.below),
                       tp * pp);
  }
  if (c.above > 0) out += fmt::format(", or --tensor-parallel-size {}", c.above);
  return out + fmt::format(" ({} attention heads: a TP size must divide them)",
                           AttentionHeads(spec));
}

bool LargeGpuDefaults(const GpuSpec& gpu) {
  // get_batch_defaults asks the platform for the total (platforms/cuda.py
  // NvmlCudaPlatform.get_device_total_memory: nvmlDeviceGetMemoryInfo) inside a try whose
  // except branch sets device_memory = 0 (vllm/engine/arg_utils.py, 0.9-0.22). A card whose NVML
  // memory query answers Not Supported (GB10) therefore gets the small defaults at any size; the
  // NVIDIA vLLM 0.13 build on a 121.69 GiB GB10 printed max_num_batched_tokens=2048.
  if (gpu.nvml_memory_unsupported) return false;
  return gpu.total_bytes >= kLargeGpuBytes && gpu.name.find("A100") == std::string::npos &&
         gpu.id.find("a100") == std::string::npos;
}

int64_t DefaultMaxNumBatchedTokens(const GpuSpec& gpu) {
  return LargeGpuDefaults(gpu) ? kLargeBatchedTokens : kSmallBatchedTokens;
}

void ApplySchedulerDefaults(const Rules& rules, const GpuSpec& gpu, VllmSettings* s) {
  const bool big = LargeGpuDefaults(gpu);
  if (s->v0_engine) {
    if (s->max_num_seqs == 0) s->max_num_seqs = kSmallMaxNumSeqs;
    if (s->max_num_batched_tokens == 0) {
      // Before v0.5.4 (PR #6666) chunked prefill was never on by default; its budget was 512
      // tokens before 0.8 (Rules::v0_chunked_prefill_tokens).
      const bool chunked =
          s->enable_chunked_prefill == 1 ||
          (s->enable_chunked_prefill < 0 && rules.v0_long_context_chunked_prefill &&
           s->max_model_len > kV0ChunkedPrefillAbove);
      s->max_num_batched_tokens =
          chunked ? rules.v0_chunked_prefill_tokens
                  : std::max<int64_t>(s->max_model_len, kSmallBatchedTokens);
    }
  }
  // --performance-mode throughput doubles whichever of the two defaults the user left (engine/
  // arg_utils.py _set_default_max_num_seqs_and_batched_tokens_args, read at 0.22), before the
  // budget's adjustments to the length below.
  const int64_t twice = s->performance_mode == "throughput" ? 2 : 1;
  if (s->max_num_seqs == 0) s->max_num_seqs = twice * (big ? kLargeMaxNumSeqs : kSmallMaxNumSeqs);
  if (s->max_num_batched_tokens == 0) {
    const bool largest = big && rules.batch_tier_160gib && gpu.total_bytes >= kLargestGpuBytes;
    s->max_num_batched_tokens =
        twice * (largest ? kLargestBatchedTokens : big ? kLargeBatchedTokens : kSmallBatchedTokens);
    // Chunked prefill off: a prompt is prefilled whole, so the budget is at least the length
    // (engine/arg_utils.py _set_default_max_num_seqs_and_batched_tokens_args, read at 0.22:
    // "If max_model_len is too short, use the default for higher throughput").
    if (s->enable_chunked_prefill == 0) {
      s->max_num_batched_tokens = std::max(s->max_num_batched_tokens, s->max_model_len);
    }
    if (rules.cap_batched_tokens_by_seqs_x_len) {
      s->max_num_batched_tokens =
          std::min<int64_t>(s->max_num_batched_tokens, s->max_num_seqs * s->max_model_len);
    }
  }
  s->max_num_seqs = std::min(s->max_num_seqs, s->max_num_batched_tokens);
}

}  // namespace vramfit::vllm
