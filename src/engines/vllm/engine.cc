// vLLM behind the engine interface: its flags, command lines, planner and fit knobs, adapted
// to the engine-neutral types (EngineSettings <-> VllmSettings, VllmPlan -> Plan).
#include "engines/vllm/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "engines/vllm/command.h"
#include "engines/vllm/config_file.h"
#include "engines/vllm/defaults.h"
#include "engines/vllm/flags.h"
#include "engines/vllm/kv_estimate.h"
#include "engines/vllm/refusals.h"
#include "engines/vllm/serve_flags.h"
#include "engines/vllm/vllm.h"
#include "vramfit/advice.h"

namespace vramfit::vllm {
namespace {

class PreparedVllmModel : public PreparedModel {
 public:
  explicit PreparedVllmModel(const Inventory& inv) : inv_(inv), profile_(ProfileVllmWeights(inv)) {}

  Result<vramfit::Plan> MakePlan(const GpuSpec& gpu, const EngineSettings& s) const override {
    auto p = PlanVllm(inv_, *profile_, gpu, ToVllmSettings(s));
    if (!p.ok()) return p.status();
    return static_cast<vramfit::Plan&&>(std::move(*p));
  }

  std::vector<Remedy> Remedies(const GpuSpec& gpu, const EngineSettings& es,
                               const vramfit::Plan& plan) const override {
    std::vector<Remedy> out;
    if (plan.gpus.empty()) return out;
    const VllmSettings s = ToVllmSettings(es);
    auto add = [&](const VllmSettings& v, std::string change, std::string cost, int group = 0) {
      out.push_back({std::move(change), std::move(cost), ToEngineSettings(v), group});
    };
    if (plan.fits) {
      // Inside the measured error: a context whose one request leaves the spread free (KV per
      // request grows about linearly with the length), then shorter ones.
      const GpuPlan& g = plan.gpus[0];
      if (!plan.low_confidence() || plan.kv_needed_bytes == 0 ||
          g.kv_cache_bytes <= plan.uncertainty_bytes) {
        return out;
      }
      const double room = static_cast<double>(g.kv_cache_bytes - plan.uncertainty_bytes) /
                          static_cast<double>(plan.kv_needed_bytes);
      for (double f : {1.0, 0.9, 0.75, 0.5}) {
        const int64_t len = TidyContextLength(
            static_cast<int64_t>(static_cast<double>(plan.max_model_len) * room * f));
        if (len <= 0 || len >= plan.max_model_len) continue;
        VllmSettings v = s;
        v.max_model_len = len;
        add(v, fmt::format("--max-model-len {}", len),
            "shorter context per request, with the plan's measured error left free", 3);
      }
      return out;
    }
    if (!plan.failure_stage) return out;
    const ModelSpec& spec = inv_.spec;
    const std::string& msg = plan.failure_message;
    const bool moe = std::any_of(spec.layers.begin(), spec.layers.end(),
                                 [](const LayerSpec& l) { return l.mlp.kind == MlpKind::kMoe; });
    // A block-quantized shard that tensor parallelism cuts off the block grid (fp8.py): whole
    // experts per GPU, or fewer TP ranks with pipeline stages on the same GPUs.
    if (msg.find("weight quantization block_") != std::string::npos) {
      if (moe && !s.enable_expert_parallel) {
        VllmSettings v = s;
        v.enable_expert_parallel = true;
        add(v, "--enable-expert-parallel", "experts split whole across the GPUs, not sliced");
      }
      for (int64_t tp = s.tensor_parallel_size / 2; tp >= 1; tp /= 2) {
        VllmSettings v = s;
        v.tensor_parallel_size = tp;
        v.pipeline_parallel_size = s.pipeline_parallel_size * (s.tensor_parallel_size / tp);
        add(v,
            fmt::format("--tensor-parallel-size {} --pipeline-parallel-size {} (the same {} "
                        "GPUs)",
                        tp, v.pipeline_parallel_size,
                        tp * v.pipeline_parallel_size * s.data_parallel_size),
            "pipeline stages instead of tensor parallelism: slower per request", 1);
      }
    }
    // A named attention backend vLLM refuses for this model or GPU: vLLM's own choice, or a
    // backend that passes every check here, in vLLM's order of preference for the card.
    if (msg.rfind("Selected backend AttentionBackendEnum.", 0) == 0 ||
        msg.find("unrecognized arguments: --attention-backend") != std::string::npos) {
      VllmSettings v = s;
      v.attention_backend.clear();
      add(v, "without --attention-backend", "vLLM picks the backend that runs on this GPU", 9);
    }
    // A length past the derived one (plan.cc, MaxLenError): the derived length, or Qwen's
    // documented YaRN that derives the length asked for.
    if (msg.rfind("User-specified max_model_len", 0) == 0) {
      // The derived length as the message gives it ("(max_position_embeddings=40960 in ..."),
      // after --hf-overrides and --disable-sliding-window.
      constexpr std::string_view kDerived = "the derived max_model_len (";
      const size_t at = msg.find(kDerived);
      const size_t eq = at == std::string::npos ? at : msg.find('=', at + kDerived.size());
      const int64_t derived = eq == std::string::npos ? 0 : std::atoll(msg.c_str() + eq + 1);
      if (derived > 0 && derived < s.max_model_len) {
        VllmSettings v = s;
        v.max_model_len = derived;
        add(v, fmt::format("--max-model-len {}", derived),
            "the longest context vLLM derives from the model's config.json", 3);
      }
      if (const std::string yarn = QwenYarnOverride(spec, s.max_model_len);
          !yarn.empty() && s.hf_overrides.empty() && s.rope_scaling.empty() &&
          s.sliding_window_cap == 0) {
        VllmSettings v = s;
        v.hf_overrides = yarn;
        add(v, fmt::format("--hf-overrides '{}'", yarn),
            "Qwen's documented static YaRN: the length asked for, maybe some quality on short "
            "prompts");
      }
    }
    // Attention heads that TP does not divide (plan.cc): the nearest smaller size that does,
    // with pipeline stages on the same GPUs where it divides TP.
    if (msg.rfind("Total number of attention heads", 0) == 0) {
      const TpChoices c = HeadsTpChoices(spec, s.tensor_parallel_size);
      if (s.tensor_parallel_size % c.below == 0) {
        VllmSettings v = s;
        v.tensor_parallel_size = c.below;
        v.pipeline_parallel_size = s.pipeline_parallel_size * (s.tensor_parallel_size / c.below);
        add(v,
            fmt::format("--tensor-parallel-size {} --pipeline-parallel-size {} (the same {} "
                        "GPUs)",
                        c.below, v.pipeline_parallel_size,
                        s.tensor_parallel_size * s.pipeline_parallel_size),
            "a TP size that divides the attention heads, pipeline stages for the rest", 12);
      }
      VllmSettings v = s;
      v.tensor_parallel_size = c.below;
      add(v, fmt::format("--tensor-parallel-size {}", c.below),
          "a TP size that divides the attention heads, on fewer GPUs", 12);
      // A larger size is the general search for more GPUs (advice.cc), powers of two.
    }
    // Dual batch overlap without a DeepEP all-to-all: without micro-batching, or with DeepEP.
    if (msg.rfind("Microbatching currently only supports", 0) == 0) {
      VllmSettings v = s;
      v.enable_dbo = false;
      add(v, "without --enable-dbo", "one batch at a time, no overlap of compute and all-to-all",
          10);
      v = s;
      v.all2all_backend = "deepep_low_latency";
      v.all2all_from_env = false;
      add(v, "--all2all-backend deepep_low_latency",
          "needs the DeepEP kernels installed; their buffers are not counted", 11);
    }
    // Memory outside the budget that the device cannot hold beside it: the highest utilization
    // that leaves room for the CUDA context, other processes, the graph pool and the plan's
    // `extra` term (by its --explain name).
    auto leave_room = [&](std::string_view extra, std::string cost, int group) {
      const GpuPlan& g = plan.gpus[0];
      uint64_t outside = g.cuda_context_bytes + s.other_process_bytes + g.cudagraph_bytes;
      for (const Explained& e : g.explain) {
        if (e.name == extra) outside += e.bytes;
      }
      if (g.total_bytes <= outside) return;
      const double u = std::floor(100.0 * static_cast<double>(g.total_bytes - outside) /
                                  static_cast<double>(g.total_bytes)) /
                       100.0;
      const double given = s.gpu_memory_utilization;
      if (u > 0 && (given == 0 || u < given)) {
        VllmSettings v = s;
        v.gpu_memory_utilization = u;
        add(v, fmt::format("--gpu-memory-utilization {:.2f}", u), std::move(cost), group);
      }
    };
    // --skip-mm-profiling's encoder at the first request (plan.cc EncoderAtFirstRequest): the
    // encoder profiled again, or a utilization that leaves it room beside the graph pool.
    if (msg.rfind("CUDA out of memory in the multimodal encoder at the first request", 0) == 0) {
      VllmSettings v = s;
      v.skip_mm_profiling = false;
      add(v, "without --skip-mm-profiling",
          "vLLM profiles the encoder and sizes the KV cache around it", 9);
      leave_room("encoder_at_first_request",
                 "less memory for the KV cache, room for the encoder beside it", 10);
    }
    // LMCache's buffers after the KV cache is sized, a CUDA graph pool captured on top of the
    // budget.
    if (msg.rfind("CUDA out of memory as the KV cache is set up", 0) == 0 ||
        msg.rfind("CUDA out of memory during CUDA graph capture", 0) == 0) {
      leave_room("kv_connector",
                 "less memory for the KV cache, room for what vLLM allocates outside its budget",
                 0);
    }
    // A fixed KV pool (--kv-cache-memory-bytes) that the device cannot hold beside the weights,
    // the forward's activations and the graph pool: the largest whole GiB that leaves them room,
    // or vLLM's own profiling without the flag.
    if (s.kv_cache_memory_bytes > 0 &&
        (msg.rfind("CUDA out of memory allocating the KV cache", 0) == 0 ||
         msg.rfind("CUDA out of memory in the warm-up", 0) == 0 ||
         msg.rfind("CUDA out of memory during CUDA graph capture", 0) == 0)) {
      const GpuPlan& g = plan.gpus[0];
      const uint64_t held = g.cuda_context_bytes + s.other_process_bytes + g.weights_bytes +
                            g.lora_bytes + g.activation_peak_bytes + g.non_torch_bytes +
                            g.cudagraph_bytes;
      const uint64_t room_gib = g.total_bytes > held ? (g.total_bytes - held) >> 30 : 0;
      if (room_gib > 0 && (room_gib << 30) < s.kv_cache_memory_bytes) {
        VllmSettings v = s;
        v.kv_cache_memory_bytes = room_gib << 30;
        add(v, fmt::format("--kv-cache-memory-bytes {}G", room_gib),
            "a smaller fixed KV cache, room for the forward's activations and CUDA graphs", 7);
      }
      VllmSettings v = s;
      v.kv_cache_memory_bytes = 0;
      add(v, "without --kv-cache-memory-bytes",
          "vLLM sizes the KV cache from --gpu-memory-utilization after its profile run", 8);
    }
    // LoRA slots (allocated with the weights, taken from the KV budget): fewer slots, then a
    // lower rank (vLLM's allowed ranks: 1, 8, 16, 32, 64, ...), each with the same adapters'
    // rank as the limit.
    if (s.enable_lora && plan.gpus[0].lora_bytes > 0 &&
        (*plan.failure_stage == Stage::kLoad || *plan.failure_stage == Stage::kKvCache)) {
      if (s.max_loras > 1) {
        VllmSettings v = s;
        v.max_loras = 1;
        add(v, "--max-loras 1", "one adapter in a batch at a time (the slots scale with it)", 4);
      }
      for (int64_t rank : {64, 32, 16, 8}) {
        if (rank >= s.max_lora_rank) continue;
        VllmSettings v = s;
        v.max_lora_rank = rank;
        add(v, fmt::format("--max-lora-rank {}", rank),
            fmt::format("adapters of rank {} at most (the slots scale with the rank)", rank), 5);
      }
    }
    // The Mamba block check (plan.cc MambaBlocksForGraphs): as many sequences as blocks.
    constexpr std::string_view kAtMost = "lower max_num_seqs to at most ";
    if (const size_t at = msg.find(kAtMost); at != std::string::npos) {
      const int64_t blocks = std::atoll(msg.c_str() + at + kAtMost.size());
      if (blocks > 0) {
        VllmSettings v = s;
        v.max_num_seqs = blocks;
        add(v, fmt::format("--max-num-seqs {}", blocks),
            "one Mamba state block for each sequence the decode graphs are captured for");
      }
    }
    // Decode context parallelism for a KV cache that does not fit: the TP group's ranks keep
    // a share of each request's tokens instead of the same ones (MLA's latent is otherwise
    // replicated on every rank; GQA's KV heads once TP exceeds them). The largest valid size
    // first; the plan refuses the sizes vLLM refuses (refusals.cc ContextParallel*).
    if (*plan.failure_stage == Stage::kKvCache && s.tensor_parallel_size > 1 &&
        s.decode_context_parallel_size == 1) {
      for (int64_t d = s.tensor_parallel_size; d >= 2; d /= 2) {
        if (s.tensor_parallel_size % d != 0) continue;
        VllmSettings v = s;
        v.decode_context_parallel_size = d;
        add(v, fmt::format("--decode-context-parallel-size {}", d),
            fmt::format("each of {} ranks keeps 1/{} of every request's KV tokens (vLLM "
                        "0.10.2+ for MLA, 0.11.1+ for GQA); decode all-gathers across them",
                        d, d),
            6);
      }
    }
    // Chunked prefill off with a budget below the length (plan.cc): a budget of the length, or
    // chunked prefill back on.
    if (msg.rfind("max_num_batched_tokens (", 0) == 0 &&
        msg.find("is smaller than max_model_len") != std::string::npos) {
      VllmSettings v = s;
      v.max_num_batched_tokens = s.max_model_len;
      add(v, fmt::format("--max-num-batched-tokens {}", s.max_model_len),
          "a prompt of the whole length is prefilled in one step", 9);
      VllmSettings c = s;
      c.enable_chunked_prefill = -1;
      add(c, "without --no-enable-chunked-prefill",
          "long prompts are prefilled in chunks of the batched-token budget", 9);
    }
    if (msg.rfind("Bfloat16 is only supported", 0) == 0) {
      VllmSettings v = s;
      v.dtype = "half";
      add(v, "--dtype half", "float16 activations (bfloat16-trained models may overflow)");
    }
    if (msg.find("is not supported for quantization method") != std::string::npos &&
        s.dtype != "auto") {
      VllmSettings v = s;
      v.dtype = "auto";
      add(v, "--dtype auto", "the checkpoint's 16-bit dtype");
    }
    if (*plan.failure_stage == Stage::kLoad &&
        msg.rfind("CUDA out of memory while loading", 0) == 0) {
      const GpuPlan& g = plan.gpus[0];
      const uint64_t held = g.cuda_context_bytes + s.other_process_bytes;
      const uint64_t free = g.total_bytes > held ? g.total_bytes - held : 0;
      const uint64_t over = g.load_peak_bytes > free ? g.load_peak_bytes - free : 0;
      // --cpu-offload-gb: the smallest whole GiB that brings the load under what is free, then
      // more in steps for the KV cache; never more than the weights.
      const int64_t weights_gib = static_cast<int64_t>(g.weights_bytes >> 30);
      const int64_t first = static_cast<int64_t>(s.cpu_offload_gb) +
                            static_cast<int64_t>((over + (1ull << 30) - 1) >> 30) + 1;
      for (int64_t n = first; n <= weights_gib; n += std::max<int64_t>(1, (n - first + 1))) {
        VllmSettings v = s;
        v.cpu_offload_gb = static_cast<double>(n);
        add(v, fmt::format("--cpu-offload-gb {}", n),
            fmt::format("{} GiB of weights per GPU read over PCIe every step: much slower", n),
            2);
      }
      // Prefetch offloading (v0.17+, plan.cc WeightOffload): the fewest layers of each group in
      // CPU memory that fit, copied in ahead of use (one layer's buffers on the GPU).
      auto release = ParseRelease(s.version.empty() ? "0.22" : s.version);
      if (release.ok() && RulesFor(*release).prefetch_offload && s.offload_group_size == 0 &&
          s.offload_backend.empty() && s.cpu_offload_gb == 0) {
        constexpr std::pair<int64_t, int64_t> kGroups[] = {{8, 1}, {4, 1}, {8, 3}, {2, 1},
                                                           {8, 5}, {4, 3}, {8, 7}};
        for (const auto& [group, in_group] : kGroups) {
          VllmSettings v = s;
          v.offload_group_size = group;
          v.offload_num_in_group = in_group;
          add(v,
              in_group == 1
                  ? fmt::format("--offload-group-size {}", group)
                  : fmt::format("--offload-group-size {} --offload-num-in-group {}", group,
                                in_group),
              fmt::format("{} of every {} decoder layers in CPU memory, each copied in ahead of "
                          "use over PCIe: slower, though less than --cpu-offload-gb (vLLM 0.17+)",
                          in_group, group),
              12);
        }
      }
    }
    // Online FP8 for a 16-bit checkpoint, where the GPU runs the fp8 method; else 4-bit NF4 by
    // bitsandbytes while loading (a dense model: the MoE path is not modelled). Also where the
    // weights loaded but left too little for the profile run or the KV cache: smaller weights
    // leave the rest of the budget to them.
    const Stage failed = *plan.failure_stage;
    const bool weights_crowd =
        failed == Stage::kLoad ||
        ((failed == Stage::kProfile || failed == Stage::kKvCache) &&
         plan.gpus[0].weights_bytes * 2 > plan.gpus[0].budget_bytes);
    if (weights_crowd && !spec.quant.quantized() && s.quantization.empty()) {
      VllmSettings v = s;
      v.quantization = "fp8";
      add(v, "--quantization fp8", "weights quantized to FP8 while loading: a small accuracy "
                                   "cost", 10);
      if (!moe) {
        v.quantization = "bitsandbytes";
        add(v, "--quantization bitsandbytes",
            "weights quantized to 4-bit NF4 while loading (pip install bitsandbytes): an "
            "accuracy cost and slower decoding than an AWQ or GPTQ checkpoint", 10);
      }
    }
    return out;
  }

 private:
  const Inventory& inv_;
  std::shared_ptr<const VllmWeightProfile> profile_;
};

Result<EngineSettings> ReadEngineFlags(const FlagValues& given, EngineSettings base) {
  auto s = ReadFlags(given, ToVllmSettings(base));
  if (!s.ok()) return s.status();
  return ToEngineSettings(*s);
}

Status CheckVersion(const std::string& version) {
  auto v = ParseRelease(version);
  return v.ok() ? Status::Ok() : v.status();
}

Result<std::unique_ptr<PreparedModel>> Prepare(const Inventory& inv) {
  VRAMFIT_RETURN_IF_ERROR(CheckPlannable(inv, "vLLM"));
  return std::unique_ptr<PreparedModel>(std::make_unique<PreparedVllmModel>(inv));
}

// The derived length with the settings' --hf-overrides read into the config first (PlanVllm
// applies them the same way); the config's own where they do not parse (the plan says why).
int64_t MaxLenUnder(const ModelSpec& spec, const EngineSettings& es) {
  const VllmSettings s = ToVllmSettings(es);
  if (s.hf_overrides.empty()) return DerivedMaxModelLen(spec);
  std::vector<std::string> ignored;
  auto o = ApplyConfigOverrides(spec, s.hf_overrides, "--hf-overrides", &ignored);
  return DerivedMaxModelLen(o.ok() ? *o : spec);
}

Status CheckContext(const ModelSpec& spec, const EngineSettings& s, int64_t len,
                    std::string_view what) {
  const int64_t max = MaxLenUnder(spec, s);
  if (len <= max || s.allow_long_max_model_len) return Status::Ok();
  return Status::InvalidArgument(fmt::format(
      "{} is beyond the model's maximum length ({}, max_position_embeddings in config.json); vLLM "
      "refuses a longer --max-model-len unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 "
      "(--allow-long-max-model-len)", what, max));
}

// Qwen's documented YaRN (defaults.h QwenYarnOverride) for a context past the derived one.
bool StretchContext(const ModelSpec& spec, int64_t len, EngineSettings* es, std::string* note) {
  VllmSettings s = ToVllmSettings(*es);
  if (!s.hf_overrides.empty() || !s.rope_scaling.empty()) return false;
  const std::string yarn = QwenYarnOverride(spec, len);
  if (yarn.empty()) return false;
  s.hf_overrides = yarn;
  *es = ToEngineSettings(s);
  *note = fmt::format("{} tokens are past the {} vLLM derives from config.json: the search adds "
                      "Qwen's documented static YaRN, --hf-overrides '{}' (the model card's "
                      "long-context setting; it may cost some quality on short prompts)",
                      len, DerivedMaxModelLen(spec), yarn);
  return true;
}

const char* FlagName(Setting s) {
  switch (s) {
    case Setting::kTensorParallel: return "--tensor-parallel-size";
    case Setting::kPipelineParallel: return "--pipeline-parallel-size";
    case Setting::kMaxModelLen: return "--max-model-len";
    case Setting::kGpuMemoryUtilization: return "--gpu-memory-utilization";
    case Setting::kKvCacheDtype: return "--kv-cache-dtype";
    case Setting::kMaxNumSeqs: return "--max-num-seqs";
    case Setting::kMaxNumBatchedTokens: return "--max-num-batched-tokens";
    case Setting::kEnforceEager: return "--enforce-eager";
  }
  return "";
}

// The fit knobs: each leaves a setting the user gave alone (the search checks which were
// given), and changes nothing where vLLM's default is already the value.
// v0.3.0-v0.4.0 have no "fp8" choice, only "fp8_e5m2" (arg_utils.py choices=['auto',
// 'fp8_e5m2'], PR #2279; "fp8" from v0.4.1, Rules::kv_fp8): the same halving in their spelling.
bool Fp8Kv(const GpuSpec&, EngineSettings* s) {
  if (s->kv_cache_dtype != "auto") return false;
  const Result<int> release =
      s->version.empty() ? Result<int>(kNewestModelled) : ParseRelease(s->version);
  const Rules rules = RulesFor(release.ok() ? *release : kNewestModelled);
  s->kv_cache_dtype = !rules.kv_fp8 && rules.kv_fp8_e5m2 ? "fp8_e5m2" : "fp8";
  return true;
}
bool Eager(const GpuSpec&, EngineSettings* s) {
  if (s->enforce_eager) return false;
  s->enforce_eager = true;
  return true;
}
// Above both of vLLM's defaults (0.9, 0.92).
constexpr double kHighUtilization = 0.95;
bool HighUtilization(const GpuSpec&, EngineSettings* s) {
  if (s->gpu_memory_utilization != 0) return false;
  s->gpu_memory_utilization = kHighUtilization;
  return true;
}
// A smaller prefill step where vLLM's default is larger.
constexpr int64_t kSmallBatch = 2048;
bool SmallBatch(const GpuSpec& gpu, EngineSettings* s) {
  if (s->max_num_batched_tokens != 0 || DefaultMaxNumBatchedTokens(gpu) <= kSmallBatch) {
    return false;
  }
  s->max_num_batched_tokens = kSmallBatch;
  return true;
}
constexpr int64_t kFewSeqs = 64;
bool FewSeqs(const GpuSpec&, EngineSettings* s) {
  if (s->max_num_seqs != 0) return false;
  s->max_num_seqs = kFewSeqs;
  return true;
}

}  // namespace

const Engine& VllmEngine() {
  static const Engine kEngine = {
      .name = "vllm",
      .title = "vLLM",
      .flags = Flags(),
      .read_flags = ReadEngineFlags,
      .check_version = CheckVersion,
      .recognizes = IsServeCommand,
      .command_forms = "`vllm serve MODEL ...` or `python -m vllm.entrypoints.openai.api_server "
                       "--model MODEL ...`",
      .command_example = "vllm serve Qwen/Qwen3-8B --max-model-len 32768",
      .read_command = ReadServeCommand,
      .prepare = Prepare,
      .model_max_len = MaxLenUnder,
      .check_context = CheckContext,
      .knobs = {{Setting::kKvCacheDtype, "fp8", "a small accuracy cost", Fp8Kv},
                {Setting::kEnforceEager, "", "slower decoding", Eager},
                {Setting::kGpuMemoryUtilization, "0.95", "less headroom", HighUtilization},
                {Setting::kMaxNumBatchedTokens, "2048", "slower prefill", SmallBatch},
                {Setting::kMaxNumSeqs, "64", "fewer requests at once", FewSeqs}},
      .flag_name = FlagName,
      .plans_stage_gpus = true,
      // docker/Dockerfile, target vllm-openai: ENTRYPOINT `vllm serve` at 9aaf83ef5 (v0.22-dev),
      // `python3 -m vllm.entrypoints.openai.api_server` at v0.10.0; both read --model and the
      // same flags, so one reading serves every tag.
      // Its vllm-base stage installs FlashInfer beside the wheel (2024's Dockerfile the
      // flashinfer 0.0.9 release wheel; 0.9-era docker/Dockerfile FLASHINFER_WHEEL, built for
      // every platform but linux/arm64), so releases up to v0.11.0 sample with it
      // (VllmOptions::flashinfer_installed; docs/engines/vllm.md, the sampler warm-up).
      .images = {{"vllm/vllm-openai", "vllm serve", "--flashinfer-installed"}},
      .check_flags = CheckCommandFlags,
      .expand_config = WithConfigFile,
      .kv_cache = EstimateKvPaged,
      .no_memory_effect = HasNoMemoryEffect,
      .stretch_context = StretchContext,
  };
  return kEngine;
}

}  // namespace vramfit::vllm
