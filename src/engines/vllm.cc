// vLLM stage-by-stage plan (see vramfit/vllm.h). Formulas and their sources are listed in
// docs/engines/vllm.md; the measured terms (activation peak, non-torch memory, CUDA context,
// graph pool) use the constants named k* below, each explained there.
#include "vramfit/vllm.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <string_view>

#include "core/checked.h"
#include "core/units.h"
#include "vramfit/vllm_weights.h"

namespace vramfit {
namespace {

using core::CeilDiv;
using core::FormatBytes;

constexpr int kNewestModelled = 2200;  // rules read up to upstream ~v0.22-dev (9aaf83ef5)
constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kGiB = 1ull << 30;
// CUDA context of one process (driver, cuBLAS handles): 300-600 MiB in public logs; B200's
// measured 612 MiB (unsloth PR #9362). Held before vLLM's first snapshot, so never charged
// to the budget, but device memory all the same (the startup check and the graph stage).
constexpr uint64_t kCudaContext = 512 * kMiB;
// NCCL communicators and custom all-reduce buffers per rank when TP > 1: created before the
// snapshot, outside the budget like the context.
constexpr uint64_t kNcclPerRank = 384 * kMiB;
// Non-torch growth during the profile run (cuBLAS/cuBLASLt workspaces, kernel images), which
// vLLM charges to the budget. Calibrated: the median of the four TP=1 values vLLM printed in
// the validation set (0.03, 0.10, 0.35, 1.79 GiB -> 0.23 GiB); see docs/validation.md.
constexpr uint64_t kNonTorchBase = 256 * kMiB;
// Extra non-torch growth with TP > 1 in the V0 worker (all-reduce workspaces appearing during
// the profile run): the TP>1 values V0 printed were 0.25, 0.30, 0.38 GiB, median 0.30 = base
// + 48 MiB.
constexpr uint64_t kNonTorchTpExtra = 48 * kMiB;
// Sampler warm-up bytes per logit: bf16 logits (2) + fp32 copy (4) + probabilities (4) +
// top-k/top-p sort values (4) = 14 (vllm-memory.md §3.2, inferred).
constexpr uint64_t kSamplerBytesPerLogit = 14;
// Graph pool per captured graph (piecewise or full), on top of the activations of the largest
// captured size. Calibrated on the two graph estimates vLLM printed for models in reach:
// Qwen3-8B, 86 graphs: (0.52 GiB - 48 MiB) / 86 = 5.6 MiB; Qwen3.6-27B TP 2, 86 graphs:
// (0.49 GiB - 40 MiB) / 86 = 5.4 MiB. The cost does not follow the layer count (36 vs 64).
constexpr uint64_t kGraphBytesPerGraph = 5632 * 1024;  // 5.5 MiB

std::string VersionText(int v) { return fmt::format("{}.{}", v / 10000, (v / 100) % 100); }

// CUDA-graph capture sizes (VllmConfig._set_cudagraph_sizes): all sizes, ascending.
std::vector<int64_t> CaptureSizes(int version, int64_t max_num_seqs, int64_t mnbt) {
  int64_t max_capture = std::min<int64_t>(max_num_seqs * 2, 512);
  max_capture = std::min(max_capture, mnbt);
  std::vector<int64_t> sizes;
  for (int64_t s : {1, 2, 4}) if (s <= max_capture) sizes.push_back(s);
  if (version >= 1101) {  // PR #26016: step 8 up to 256, then step 16
    for (int64_t s = 8; s < std::min<int64_t>(max_capture + 1, 256); s += 8) sizes.push_back(s);
    for (int64_t s = 256; s <= max_capture; s += 16) sizes.push_back(s);
  } else {
    for (int64_t s = 8; s <= max_capture; s += 8) sizes.push_back(s);
  }
  return sizes;
}

// Bytes of activations for `tokens` tokens through one decoder layer's widest point, per rank.
// MoE layers: fused_moe's intermediate caches ([T, topk, 2I], [T*topk, I], [T, topk, H]) are
// made for at most VLLM_FUSED_MOE_CHUNK_SIZE tokens at a time (32768, 16384 from v0.11); with
// data parallel + expert parallel the naive dispatch gathers the tokens of all DP ranks first
// (FusedMoE naive prepare/finalize), so the MoE sees T x dp tokens.
uint64_t ForwardActivation(const ModelSpec& s, uint64_t tokens, uint64_t tp, bool ep, uint64_t dp = 1,
                           int rules = 2200) {
  const uint64_t act = 2;  // bf16/fp16 activations
  const uint64_t chunk = rules >= 1100 ? 16384 : 32768;
  const uint64_t moe_tokens = ep && dp > 1 ? tokens * dp : tokens;
  uint64_t widest_attn = 0, widest_mlp = 0;
  for (const LayerSpec& l : s.layers) {
    const AttentionSpec& a = l.attention;
    uint64_t attn = 0;
    if (a.kind == AttentionKind::kLinear) {
      attn = (2 * a.linear_num_key_heads * a.linear_key_head_dim + 2 * a.linear_num_value_heads * a.linear_value_head_dim) / tp;
    } else if (a.kind == AttentionKind::kMla) {
      attn = a.num_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim) / tp + a.kv_lora_rank + a.qk_rope_head_dim;
    } else {
      attn = (a.num_heads * (a.output_gate ? 2 : 1) + 2 * std::max<int64_t>(1, a.num_kv_heads)) * a.head_dim / tp;
    }
    widest_attn = std::max(widest_attn, tokens * act * attn);
    uint64_t mlp = 0;
    if (l.mlp.kind == MlpKind::kDense) {
      mlp = tokens * act * 3 * static_cast<uint64_t>(l.mlp.intermediate_size) / tp;  // gate_up output + activation
    } else {
      const uint64_t ie = ep ? l.mlp.expert_intermediate_size : l.mlp.expert_intermediate_size / tp;
      mlp = std::min(moe_tokens, chunk) * act * l.mlp.experts_per_token * (3 * ie + s.hidden_size) +
            tokens * act * 3 * l.mlp.shared_intermediate_size / tp;
      if (moe_tokens > tokens) mlp += moe_tokens * act * s.hidden_size;  // the gathered hidden states
    }
    widest_mlp = std::max(widest_mlp, mlp);
  }
  // residual + normed input + output of the block, then the wider of attention and MLP.
  return tokens * act * 3 * static_cast<uint64_t>(s.hidden_size) + std::max(widest_attn, widest_mlp);
}

Status Invalid(std::string m) { return Status::InvalidArgument(std::move(m)); }

// Shell-quotes a word when it holds anything beyond [A-Za-z0-9_./:=,@+-].
std::string ShellWord(const std::string& w) {
  const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_./:=,@+-").find(c) != std::string_view::npos;
  });
  if (plain) return w;
  std::string out = "'";
  for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The `vllm serve` command line of resolved settings `s`; flags the user left at vLLM's
// defaults (`in`) are written only where the plan depends on them.
std::string VllmCommand(const std::string& model, const VllmSettings& s, const VllmSettings& in) {
  std::string c = "vllm serve " + ShellWord(model);
  if (s.tensor_parallel_size > 1) c += fmt::format(" --tensor-parallel-size {}", s.tensor_parallel_size);
  if (s.pipeline_parallel_size > 1) c += fmt::format(" --pipeline-parallel-size {}", s.pipeline_parallel_size);
  if (s.data_parallel_size > 1) c += fmt::format(" --data-parallel-size {}", s.data_parallel_size);
  if (s.enable_expert_parallel) c += " --enable-expert-parallel";
  if (!s.quantization.empty()) c += " --quantization " + s.quantization;
  c += fmt::format(" --max-model-len {} --gpu-memory-utilization {}", s.max_model_len, s.gpu_memory_utilization);
  if (s.kv_cache_dtype != "auto") c += " --kv-cache-dtype " + s.kv_cache_dtype;
  if (s.enforce_eager) c += " --enforce-eager";
  if (in.max_num_seqs) c += fmt::format(" --max-num-seqs {}", s.max_num_seqs);
  if (in.max_num_batched_tokens) c += fmt::format(" --max-num-batched-tokens {}", s.max_num_batched_tokens);
  if (in.block_size) c += fmt::format(" --block-size {}", s.block_size);
  if (s.kv_cache_memory_bytes) c += fmt::format(" --kv-cache-memory-bytes {}", s.kv_cache_memory_bytes);
  if (s.cpu_offload_gb > 0) c += fmt::format(" --cpu-offload-gb {}", s.cpu_offload_gb);
  if (s.limit_images >= 0 || s.limit_videos >= 0) {
    std::string limits;
    if (s.limit_images >= 0) limits += fmt::format("\"image\":{}", s.limit_images);
    if (s.limit_videos >= 0) limits += fmt::format("{}\"video\":{}", limits.empty() ? "" : ",", s.limit_videos);
    c += " --limit-mm-per-prompt " + ShellWord("{" + limits + "}");
  }
  if (s.max_pixels > 0) c += " --mm-processor-kwargs " + ShellWord(fmt::format("{{\"max_pixels\":{}}}", s.max_pixels));
  std::string env;
  if (s.v0_engine) env += "VLLM_USE_V1=0 ";
  if (s.allow_long_max_model_len && in.max_model_len > 0) env += "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 ";
  return env + c;
}


}  // namespace

Result<int> ParseVllmVersion(const std::string& text) {
  std::string t = text;
  if (!t.empty() && (t[0] == 'v' || t[0] == 'V')) t = t.substr(1);
  int parts[3] = {0, 0, 0};
  size_t at = 0;
  for (int i = 0; i < 3 && at <= t.size(); ++i) {
    const char* begin = t.data() + at;
    auto [end, ec] = std::from_chars(begin, t.data() + t.size(), parts[i]);
    if (ec != std::errc() || end == begin) {
      if (i < 2) return Invalid(fmt::format("vLLM version \"{}\": expected MAJOR.MINOR[.PATCH], e.g. 0.10.2", text));
      break;
    }
    at = static_cast<size_t>(end - t.data());
    if (at < t.size() && t[at] == '.') ++at; else break;
  }
  const int v = parts[0] * 10000 + parts[1] * 100 + parts[2];
  if (v < 800) return Invalid(fmt::format("vLLM version \"{}\": releases before 0.8 are not modelled", text));
  return v;
}

Result<VllmPlan> PlanVllm(const Inventory& inv, const GpuSpec& gpu, const VllmSettings& settings) {
  if (!inv.has_spec) return Invalid("planning needs the model's config.json (none was found)");
  return PlanVllm(inv, *ProfileVllmWeights(inv), gpu, settings);
}

Result<VllmPlan> PlanVllm(const Inventory& inv, const VllmWeightProfile& profile, const GpuSpec& gpu,
                          const VllmSettings& in) {
  if (!inv.has_spec) return Invalid("planning needs the model's config.json (none was found)");
  const ModelSpec& spec = inv.spec;
  VllmPlan plan;
  plan.gpu = gpu;
  VllmSettings s = in;
  int version = kNewestModelled;
  if (!s.version.empty()) {
    auto v = ParseVllmVersion(s.version);
    if (!v.ok()) return v.status();
    version = *v;
  }
  if (s.v0_engine) {
    // VLLM_USE_V1=0: the V0 engine, default until 0.8 and removed in 0.11 (vllm/worker/worker.py).
    if (s.version.empty()) {
      version = 1000;
      plan.notes.push_back("V0 engine (VLLM_USE_V1=0): planned with vLLM 0.10's V0 worker, the last release that has it");
    } else if (version >= 1100) {
      return Invalid(fmt::format("VLLM_USE_V1=0: the V0 engine was removed in vLLM 0.11; vLLM {} has only V1",
                                 s.version));
    }
  }
  const int rules = std::clamp(version, 1000, kNewestModelled);
  plan.modelled_version = VersionText(rules);
  if (s.version.empty() && s.v0_engine) {
  } else if (s.version.empty()) {
    plan.notes.push_back(fmt::format("vLLM {}: the newest release whose source was read; later releases are "
                                     "assumed unchanged (--engine vllm@X.Y to choose)", plan.modelled_version));
  } else if (rules != version) {
    plan.notes.push_back(fmt::format("vLLM {} is planned with the rules of {}, the nearest modelled release",
                                     VersionText(version), plan.modelled_version));
  }
  // Flags (vLLM's own checks where it has them).
  if (s.tensor_parallel_size < 1 || s.pipeline_parallel_size < 1 || s.data_parallel_size < 1) {
    return Invalid("--tensor-parallel-size, --pipeline-parallel-size and --data-parallel-size must be >= 1");
  }
  if (s.gpu_memory_utilization < 0 || s.gpu_memory_utilization > 1) {
    return Invalid(fmt::format("--gpu-memory-utilization {} must be in (0, 1]", s.gpu_memory_utilization));
  }
  if (s.max_model_len < -1) return Invalid(fmt::format("--max-model-len {} must be positive (or auto)", s.max_model_len));
  if (s.max_num_seqs < 0 || s.max_num_batched_tokens < 0 || s.block_size < 0 || s.cpu_offload_gb < 0) {
    return Invalid("--max-num-seqs, --max-num-batched-tokens, --block-size and --cpu-offload-gb must be positive");
  }
  if (!s.quantization.empty()) {
    const QuantScheme& q = spec.quant;
    const std::string& m = s.quantization;
    const std::string base = m.substr(0, m.find("_marlin"));  // awq_marlin -> awq
    if (q.quantized()) {
      const std::string cfg = q.method_text;
      if (base != cfg && !(base == "fp8" && cfg == "fp8")) {
        // vllm/config/model.py _verify_quantization.
        return Invalid(fmt::format("Quantization method specified in the model config ({}) does not match the "
                                   "quantization method specified in the `quantization` argument ({}).", cfg, m));
      }
    } else if (m != "fp8" && m != "bitsandbytes") {
      return Invalid(fmt::format("--quantization {} needs a checkpoint already quantized with {}; this one is not "
                                 "quantized (vLLM quantizes online only to fp8, or bitsandbytes)", m, base));
    }
  }
  const uint64_t tp = static_cast<uint64_t>(s.tensor_parallel_size);
  plan.gpu_count = s.tensor_parallel_size * s.pipeline_parallel_size * s.data_parallel_size;
  if (s.gpu_memory_utilization == 0) s.gpu_memory_utilization = rules >= 2100 ? 0.92 : 0.9;
  const int64_t derived = spec.max_position_embeddings > 0 ? spec.max_position_embeddings : 4096;
  bool auto_len = false;
  if (s.max_model_len == -1) {
    auto_len = true;
    s.max_model_len = derived;
  } else if (s.max_model_len == 0) {
    s.max_model_len = derived;
  } else if (s.max_model_len > derived && !s.allow_long_max_model_len) {
    // vllm/config/model.py _get_and_verify_max_len.
    return Invalid(fmt::format(
        "User-specified max_model_len ({}) is greater than the derived max_model_len (max_position_embeddings={} "
        "in model's config.json). To allow overriding this maximum, set the env var "
        "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1.", s.max_model_len, derived));
  }
  // Scheduler defaults for the API server (EngineArgs.get_batch_defaults).
  const bool big = gpu.total_bytes >= 70 * kGiB && gpu.name.find("A100") == std::string::npos &&
                   gpu.id.find("a100") == std::string::npos;
  if (s.v0_engine) {
    // V0 (SchedulerConfig, EngineArgs of 0.8-0.10): 256 sequences; chunked prefill only above
    // 32K tokens of context (then 2048 tokens a step), otherwise the whole max_model_len is one
    // prefill: max(max_model_len, 2048) batched tokens, which the profile run then allocates.
    if (s.max_num_seqs == 0) s.max_num_seqs = 256;
    if (s.max_num_batched_tokens == 0) {
      s.max_num_batched_tokens = s.max_model_len > 32768 ? 2048 : std::max<int64_t>(s.max_model_len, 2048);
    }
  }
  if (s.max_num_seqs == 0) s.max_num_seqs = big ? 1024 : 256;
  if (s.max_num_batched_tokens == 0) {
    s.max_num_batched_tokens = big ? 8192 : 2048;
    if (rules >= 1100) {
      s.max_num_batched_tokens = std::min<int64_t>(s.max_num_batched_tokens, s.max_num_seqs * s.max_model_len);
    }
  }
  s.max_num_seqs = std::min(s.max_num_seqs, s.max_num_batched_tokens);
  plan.resolved = s;

  // Stage 0: startup. requested = ceil(total x utilization) against free memory.
  const uint64_t total = gpu.total_bytes;
  // NCCL is outside the budget from v0.11 (snapshot after NCCL init, PR #25359) and in the V0
  // worker; V1 before v0.11 took the snapshot first, so NCCL fell into non-torch memory.
  const bool nccl_in_budget = tp > 1 && rules < 1100 && !s.v0_engine;
  const uint64_t ctx = kCudaContext + (tp > 1 && !nccl_in_budget ? kNcclPerRank : 0);
  const uint64_t requested = static_cast<uint64_t>(std::ceil(static_cast<double>(total) * s.gpu_memory_utilization));
  const uint64_t free_at_start = total > ctx + s.other_process_bytes ? total - ctx - s.other_process_bytes : 0;
  VllmGpuPlan g;
  g.total_bytes = total;
  g.budget_bytes = requested;
  g.cuda_context_bytes = ctx;
  g.explain.push_back({"budget", requested, fmt::format("ceil(total {} x gpu_memory_utilization {})",
                                                        FormatBytes(total), s.gpu_memory_utilization)});
  auto fail = [&](const char* stage, std::string msg) {
    plan.fits = false;
    plan.failure_stage = stage;
    plan.failure_message = std::move(msg);
  };
  plan.fits = true;
  if (free_at_start < requested) {
    fail("startup", fmt::format(
        "Free memory on device cuda:0 ({:.2f}/{:.2f} GiB) on startup is less than desired GPU memory utilization "
        "({}, {:.2f} GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes.",
        static_cast<double>(free_at_start) / kGiB, static_cast<double>(total) / kGiB, s.gpu_memory_utilization,
        static_cast<double>(requested) / kGiB));
  }

  // Stage 1: load.
  VllmWeightOptions wo;
  wo.tensor_parallel_size = s.tensor_parallel_size;
  wo.enable_expert_parallel = s.enable_expert_parallel;
  wo.data_parallel_size = s.data_parallel_size;
  wo.marlin = gpu.vendor == "nvidia" && (gpu.compute_capability.empty() || gpu.compute_capability >= "7.5" ||
                                         gpu.compute_capability.size() > 3);
  wo.quantization = s.quantization;
  wo.vllm_version = rules;
  wo.mxfp4_backend = gpu.fp4 ? "flashinfer-trtllm" : "marlin";
  auto w = VllmWeightsPerRank(profile, wo);
  if (!w.ok()) return w.status();
  uint64_t weights = w->bytes_per_rank;
  if (s.pipeline_parallel_size > 1) {
    weights = CeilDiv(weights, static_cast<uint64_t>(s.pipeline_parallel_size));  // layers split by stage
    plan.notes.push_back("pipeline parallel: each stage is taken to hold an equal share of the weights");
  }
  const uint64_t offload = static_cast<uint64_t>(s.cpu_offload_gb * 1e9);
  weights = weights > offload ? weights - offload : 0;
  g.weights_bytes = weights;
  g.load_peak_bytes = weights + w->transient_bytes;
  g.explain.push_back({"weights", weights, fmt::format("checkpoint tensors sharded for TP {} ({} kernel){}{}", tp,
                                                       w->kernel, w->dropped_bytes ? fmt::format(", {} of quantization metadata freed", FormatBytes(w->dropped_bytes)) : "",
                                                       w->skipped_bytes ? fmt::format(", {} of MTP layers not loaded", FormatBytes(w->skipped_bytes)) : "")});
  g.explain.push_back({"load_peak", g.load_peak_bytes,
                       w->transient_bytes ? fmt::format("weights + {} ({})", FormatBytes(w->transient_bytes), w->transient_reason)
                                          : std::string("weights (no transient on this path)")});
  if (plan.fits && g.load_peak_bytes > free_at_start) {
    fail("load", fmt::format("CUDA out of memory while loading weights: the load needs {} per GPU ({} of weights "
                             "+ {} transient) but {} is free. --gpu-memory-utilization does not help a load-time "
                             "OOM; use more tensor parallelism, a smaller quantization, or --cpu-offload-gb.",
                             FormatBytes(g.load_peak_bytes), FormatBytes(weights), FormatBytes(w->transient_bytes),
                             FormatBytes(free_at_start)));
  }

  // Stage 2: profile (activation peak, sampler, encoder, non-torch growth).
  const uint64_t mnbt = static_cast<uint64_t>(s.max_num_batched_tokens);
  const uint64_t reqs = static_cast<uint64_t>(std::min(s.max_num_seqs, s.max_num_batched_tokens));
  const uint64_t fwd = ForwardActivation(spec, mnbt, tp, s.enable_expert_parallel,
                                         static_cast<uint64_t>(s.data_parallel_size), rules);
  const uint64_t sampler = reqs * static_cast<uint64_t>(spec.vocab_size) * kSamplerBytesPerLogit;
  uint64_t encoder = 0;
  if (spec.vision.kind == VisionKind::kQwen25Vl || spec.vision.kind == VisionKind::kQwen3Vl ||
      spec.vision.kind == VisionKind::kQwen2Vl) {
    if (s.limit_images != 0) {
      const uint64_t unit = static_cast<uint64_t>(spec.vision.patch_size * spec.vision.spatial_merge_size);
      const uint64_t max_pixels = s.max_pixels > 0 ? static_cast<uint64_t>(s.max_pixels)
                                  : spec.vision.kind == VisionKind::kQwen3Vl ? 16777216ull : 12845056ull;
      const uint64_t tok_item = std::max<uint64_t>(1, max_pixels / (unit * unit));
      const uint64_t budget = std::max(mnbt, tok_item);
      const uint64_t per_prompt = s.limit_images > 0 ? static_cast<uint64_t>(s.limit_images) : 999;
      const uint64_t items = std::max<uint64_t>(1, std::min(budget / tok_item, reqs * std::min<uint64_t>(per_prompt, s.max_model_len / tok_item + 1)));
      const uint64_t patches = items * tok_item * static_cast<uint64_t>(spec.vision.spatial_merge_size * spec.vision.spatial_merge_size);
      const uint64_t vit = patches * 2 * (3 * static_cast<uint64_t>(spec.vision.hidden_size) +
                                          3 * static_cast<uint64_t>(spec.vision.intermediate_size) / tp);
      const uint64_t stored = items * tok_item * static_cast<uint64_t>(spec.hidden_size) * 2;
      encoder = vit + stored;
      g.explain.push_back({"encoder", encoder, fmt::format("{} image(s) of {} tokens ({} max_pixels): ViT activations "
                                                           "{} + stored embeddings {}", items, tok_item, max_pixels,
                                                           FormatBytes(vit), FormatBytes(stored))});
    }
  }
  const uint64_t activation = s.measured_activation_bytes > 0 ? s.measured_activation_bytes
                                                               : std::max({fwd, sampler, encoder}) + w->largest_dequantized_layer;
  g.activation_peak_bytes = activation;
  g.explain.push_back({"activation_peak", activation,
                       fmt::format("max(forward {} at {} tokens, sampler {} = {} requests x vocab {} x {} B, encoder "
                                   "{}){}", FormatBytes(fwd), mnbt, FormatBytes(sampler), reqs, spec.vocab_size,
                                   kSamplerBytesPerLogit, FormatBytes(encoder),
                                   w->largest_dequantized_layer ? fmt::format(" + one layer dequantized by plain awq {}", FormatBytes(w->largest_dequantized_layer)) : "")});
  g.non_torch_bytes = kNonTorchBase + (nccl_in_budget ? kNcclPerRank : tp > 1 && s.v0_engine ? kNonTorchTpExtra : 0);
  if (s.measured_non_torch_bytes > 0) g.non_torch_bytes = s.measured_non_torch_bytes;
  g.explain.push_back({"non_torch", g.non_torch_bytes,
                       nccl_in_budget ? "cuBLAS workspaces and kernel images + NCCL buffers (V1 before v0.11)"
                       : tp > 1 && s.v0_engine ? "cuBLAS workspaces and kernel images + V0 all-reduce workspaces"
                                               : "cuBLAS workspaces and kernel images"});
  if (plan.fits && weights + activation + g.non_torch_bytes > free_at_start) {
    fail("profile", fmt::format("CUDA out of memory during the profile run: weights {} + activation peak {} + "
                                "non-torch {} exceed the {} free", FormatBytes(weights), FormatBytes(activation),
                                FormatBytes(g.non_torch_bytes), FormatBytes(free_at_start)));
  }

  // CUDA graphs. From v0.11 the default mode is FULL_AND_PIECEWISE: piecewise graphs for every
  // capture size plus full graphs for uniform-decode batches up to max_num_seqs ("PIECEWISE=51
  // (largest=512), FULL=35 (largest=256)"); V0 and v0.10 capture one graph per size.
  uint64_t graph = 0;
  if (!s.enforce_eager) {
    const std::vector<int64_t> sizes = CaptureSizes(rules, s.max_num_seqs, s.max_num_batched_tokens);
    int64_t graphs = static_cast<int64_t>(sizes.size());
    if (rules >= 1100 && !s.v0_engine) {
      graphs += std::count_if(sizes.begin(), sizes.end(), [&](int64_t n) { return n <= s.max_num_seqs; });
    }
    const int64_t max_capture = sizes.empty() ? 0 : sizes.back();
    graph = ForwardActivation(spec, static_cast<uint64_t>(max_capture), tp, s.enable_expert_parallel,
                              static_cast<uint64_t>(s.data_parallel_size), rules) +
            static_cast<uint64_t>(graphs) * kGraphBytesPerGraph;
    g.explain.push_back({"cudagraph", graph, fmt::format("{} graphs over {} capture sizes up to {}: activations of the "
                                                         "largest + {} x {}", graphs, sizes.size(), max_capture, graphs,
                                                         FormatBytes(kGraphBytesPerGraph))});
  }
  g.cudagraph_bytes = graph;
  const uint64_t graph_in_budget = rules >= 2100 && !s.v0_engine ? graph : 0;

  // Stage 3: KV cache.
  KvCacheOptions ko;
  ko.tensor_parallel_size = s.tensor_parallel_size;
  ko.pipeline_parallel_size = s.pipeline_parallel_size;
  ko.block_size = s.block_size;
  ko.kv_cache_dtype = s.kv_cache_dtype;
  ko.max_model_len = s.max_model_len;
  ko.max_num_batched_tokens = s.max_num_batched_tokens;
  ko.vllm_version = rules;
  auto layout = PlanKvCache(spec, ko);
  if (!layout.ok()) return layout.status();
  plan.kv_layout = *layout;
  for (const auto& n : layout->notes) plan.notes.push_back("vLLM will log: " + n);
  const uint64_t used = weights + activation + g.non_torch_bytes + graph_in_budget;
  uint64_t available = requested > used ? requested - used : 0;
  if (s.kv_cache_memory_bytes > 0) available = s.kv_cache_memory_bytes;
  g.kv_cache_bytes = available;
  g.explain.push_back({"kv_cache", available, s.kv_cache_memory_bytes ? std::string("--kv-cache-memory-bytes")
                       : fmt::format("budget {} - weights - activation - non-torch{}", FormatBytes(requested),
                                     graph_in_budget ? " - CUDA graph estimate (v0.21+)" : "")});
  // Needed bytes for one request of length L: group_size x page x sum over groups of pages.
  auto needed = [&](int64_t len) {
    KvCacheOptions k = ko;
    k.max_model_len = len;
    auto l = PlanKvCache(spec, k);
    if (!l.ok() || l->layers.empty()) return uint64_t{0};
    return KvCapacity(*l, 0, k).blocks_per_request * l->page_bytes * (l->uniform_type ? 1 : static_cast<uint64_t>(l->group_size));
  };
  auto longest_fitting = [&](int64_t hi) {
    int64_t lo = 0;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (needed(mid) <= available) lo = mid; else hi = mid - 1;
    }
    return lo;
  };
  if (plan.fits && available == 0 && !layout->layers.empty()) {
    fail("kv_cache", "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
                     "initializing the engine.");
  }
  if (auto_len && plan.fits) {
    const int64_t fit = longest_fitting(s.max_model_len);
    if (fit <= 0) {
      fail("kv_cache", "Cannot auto-fit max_model_len: not enough GPU memory available to serve even a single token.");
    } else {
      if (fit < s.max_model_len) {
        plan.notes.push_back(fmt::format("vLLM will log: Auto-fit max_model_len: reduced from {} to {} to fit in "
                                         "available GPU memory ({:.2f} GiB available for KV cache)",
                                         s.max_model_len, fit, static_cast<double>(available) / kGiB));
      }
      s.max_model_len = fit;
      ko.max_model_len = fit;
      plan.resolved.max_model_len = fit;
      auto l2 = PlanKvCache(spec, ko);
      if (l2.ok()) plan.kv_layout = *l2;
    }
  }
  plan.max_model_len = s.max_model_len;
  plan.kv_needed_bytes = needed(s.max_model_len);
  if (!plan.kv_layout.layers.empty()) {
    const auto cap = KvCapacity(plan.kv_layout, available, ko);
    plan.kv_cache_tokens = cap.kv_cache_tokens;
    plan.max_concurrency = cap.max_concurrency;
    if (plan.fits && s.v0_engine && static_cast<uint64_t>(s.max_model_len) > plan.kv_cache_tokens) {
      // V0: raise_if_cache_size_invalid (vllm/worker/worker.py) compares against the whole pool.
      plan.estimated_max_model_len = static_cast<int64_t>(plan.kv_cache_tokens);
      fail("kv_cache", fmt::format("The model's max seq len ({}) is larger than the maximum number of tokens that can "
                                   "be stored in KV cache ({}). Try increasing `gpu_memory_utilization` or decreasing "
                                   "`max_model_len` when initializing the engine.", s.max_model_len,
                                   plan.kv_cache_tokens));
    } else if (plan.fits && !s.v0_engine && plan.kv_needed_bytes > available) {
      plan.estimated_max_model_len = longest_fitting(s.max_model_len);
      fail("kv_cache", fmt::format(
          "To serve at least one request with the model's max seq len ({}), ({:.2f} GiB KV cache is needed, which "
          "is larger than the available KV cache memory ({:.2f} GiB).{} Try increasing `gpu_memory_utilization` or "
          "decreasing `max_model_len` when initializing the engine.", s.max_model_len,
          static_cast<double>(plan.kv_needed_bytes) / kGiB, static_cast<double>(available) / kGiB,
          plan.estimated_max_model_len > 0 ? fmt::format(" Based on the available memory, the estimated maximum "
                                                         "model length is {}.", plan.estimated_max_model_len)
                                           : std::string()));
    }
  }

  // Stage 4: CUDA graph capture, after the KV cache. Before v0.21 the pool comes on top of the
  // budget; from v0.21 its estimate was reserved inside it.
  if (plan.fits && graph > 0) {
    const uint64_t process = ctx + std::max(requested, weights + activation + g.non_torch_bytes) + graph - graph_in_budget;
    if (process + s.other_process_bytes > total) {
      fail("cudagraph", fmt::format("CUDA out of memory during CUDA graph capture: the budget {} plus the graph pool "
                                    "{} and the CUDA context {} exceed the GPU's {}; add --enforce-eager or lower "
                                    "--gpu-memory-utilization", FormatBytes(requested), FormatBytes(graph),
                                    FormatBytes(ctx), FormatBytes(total)));
    }
  }
  plan.gpus.assign(static_cast<size_t>(tp), g);
  plan.command = VllmCommand(inv.repo.empty() ? inv.model : inv.repo, s, in);
  return plan;
}

}  // namespace vramfit
