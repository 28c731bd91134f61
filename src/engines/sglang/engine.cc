// SGLang behind the engine interface: its flags, command lines, planner, remedies and fit knobs,
// adapted to the engine-neutral types (EngineSettings <-> SglangSettings).
#include "engines/sglang/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engines/sglang/command.h"
#include "engines/sglang/defaults.h"
#include "engines/sglang/flags.h"
#include "engines/sglang/server_flags.h"
#include "engines/sglang/sglang.h"
#include "model/vision_tokens.h"

namespace vramfit::sglang {
namespace {

// The highest --mem-fraction-static a remedy proposes: above it the activations and graphs of
// any default setting no longer fit.
constexpr double kHighestFraction = 0.95;
constexpr double kLowestFraction = 0.5;

class PreparedSglangModel : public PreparedModel {
 public:
  explicit PreparedSglangModel(const Inventory& inv) : inv_(inv) {}

  Result<Plan> MakePlan(const GpuSpec& gpu, const EngineSettings& s) const override {
    return PlanSglang(inv_, gpu, ToSglangSettings(s));
  }

  // The two classic failures, each moved the way it needs: a pool with no room (rest <= 0)
  // wants a higher --mem-fraction-static; an out-of-memory in graph capture or the first
  // prefill wants a lower one (or smaller graphs and chunks); a load that does not fit wants
  // smaller weights.
  std::vector<Remedy> Remedies(const GpuSpec& gpu, const EngineSettings& es,
                               const Plan& plan) const override {
    std::vector<Remedy> out;
    if (plan.fits || !plan.failure_stage || plan.gpus.empty()) return out;
    const SglangSettings s = ToSglangSettings(es);
    const SglangSettings r = ToSglangSettings(plan.resolved);
    auto add = [&](const SglangSettings& v, std::string change, std::string cost, int group) {
      out.push_back({std::move(change), std::move(cost), ToEngineSettings(v), group});
    };
    const Stage stage = *plan.failure_stage;
    const double now = r.gpu_memory_utilization;
    // A context past the derived one (plan.cc): the derived length.
    if (stage == Stage::kStartup &&
        plan.failure_message.rfind("User-specified context_length", 0) == 0) {
      SglangSettings v = s;
      v.max_model_len = s.override_context_len > 0 ? s.override_context_len
                                                   : DerivedContextLen(inv_.spec);
      add(v, fmt::format("--context-length {}", v.max_model_len),
          "the longest context SGLang derives from the model's config.json", 0);
    }
    if (stage == Stage::kKvCache &&
        plan.failure_message.rfind("Not enough memory", 0) == 0) {
      // From the lowest fraction whose pool holds one request of the whole context, where one
      // up to the highest does; else from the lowest that leaves any pool.
      double first = std::ceil(now * 100 + 1) / 100;
      for (double f = first; f <= kHighestFraction + 1e-9; f += 0.01) {
        SglangSettings v = s;
        v.gpu_memory_utilization = std::round(f * 100) / 100;
        auto p = PlanSglang(inv_, gpu, v);
        if (p.ok() && p->kv_cache_tokens > 0 &&
            p->kv_cache_tokens >= static_cast<uint64_t>(std::max<int64_t>(1, p->max_model_len))) {
          first = f;
          break;
        }
      }
      for (double f = first; f <= kHighestFraction + 1e-9; f += 0.01) {
        SglangSettings v = s;
        v.gpu_memory_utilization = std::round(f * 100) / 100;
        add(v, fmt::format("--mem-fraction-static {:.2f}", v.gpu_memory_utilization),
            "less memory left for activations and CUDA graphs", 1);
      }
    }
    if (stage == Stage::kCudaGraph || stage == Stage::kRuntime ||
        (stage == Stage::kKvCache && plan.failure_message.rfind("CUDA out of memory", 0) == 0)) {
      for (double f = std::floor(now * 100 - 1) / 100; f >= kLowestFraction - 1e-9; f -= 0.01) {
        SglangSettings v = s;
        v.gpu_memory_utilization = std::round(f * 100) / 100;
        add(v, fmt::format("--mem-fraction-static {:.2f}", v.gpu_memory_utilization),
            "a smaller KV pool", 2);
      }
      if (stage == Stage::kCudaGraph && !r.enforce_eager) {
        for (int64_t bs = r.cuda_graph_max_bs / 2; bs >= 8; bs /= 2) {
          SglangSettings v = s;
          v.cuda_graph_max_bs = bs;
          add(v, fmt::format("--cuda-graph-max-bs {}", bs), "larger batches decode without "
              "graphs: slower", 3);
        }
      }
      if (stage == Stage::kRuntime && r.max_num_batched_tokens > 1024) {
        for (int64_t c = r.max_num_batched_tokens / 2; c >= 1024; c /= 2) {
          SglangSettings v = s;
          v.max_num_batched_tokens = c;
          add(v, fmt::format("--chunked-prefill-size {}", c), "slower prefill of long prompts",
              4);
        }
      }
      // Images (plan.cc ResolveImages): smaller ones by SGLANG_IMAGE_MAX_PIXELS, halving down
      // to 256 tokens an image, then fewer a request.
      if (stage == Stage::kRuntime && HasQwenVlImageRule(inv_.spec.vision) &&
          r.images_per_request != 0) {
        const int64_t unit = std::max<int64_t>(1, inv_.spec.vision.patch_size) *
                             std::max<int64_t>(1, inv_.spec.vision.spatial_merge_size);
        const int64_t from = std::min(r.image_max_pixels > 0 ? r.image_max_pixels
                                                               : kImageMaxPixels,
                                      ImageMaxPixels(inv_.spec.vision, 0));
        for (int64_t px = from / 2; px >= 256 * unit * unit; px /= 2) {
          SglangSettings v = s;
          v.image_max_pixels = px;
          add(v, fmt::format("SGLANG_IMAGE_MAX_PIXELS={}", px),
              "images resized smaller: less detail", 5);
        }
        for (int64_t k = r.images_per_request - 1; k >= 1; --k) {
          SglangSettings v = s;
          v.images_per_request = k;
          add(v, fmt::format("--limit-mm-data-per-request '{{\"image\": {}}}'", k),
              "fewer images a request", 6);
        }
      }
    }
    if (stage == Stage::kLoad && !inv_.spec.quant.quantized() && s.quantization.empty() &&
        gpu.fp8) {
      SglangSettings v = s;
      v.quantization = "fp8";
      add(v, "--quantization fp8",
          "weights quantized to FP8 after loading (the load still peaks at 16 bits): a small "
          "accuracy cost", 0);
    }
    // After the fractions: a load that does not fit, or weights that leave no pool:
    // --cpu-offload-gb, from the smallest whole GiB that brings the load under the free memory,
    // in growing steps; never more than the weights.
    if (stage == Stage::kLoad || (stage == Stage::kKvCache &&
                                  plan.failure_message.rfind("Not enough memory", 0) == 0)) {
      const GpuPlan& g = plan.gpus[0];
      const uint64_t free = g.total_bytes > g.cuda_context_bytes
                                ? g.total_bytes - g.cuda_context_bytes
                                : 0;
      const uint64_t over = g.load_peak_bytes > free ? g.load_peak_bytes - free : 0;
      const int64_t weights_gib = static_cast<int64_t>(g.weights_bytes >> 30);
      const int64_t first = static_cast<int64_t>(s.cpu_offload_gb) +
                            static_cast<int64_t>((over + (1ull << 30) - 1) >> 30) + 1;
      for (int64_t n = first; n <= weights_gib; n += std::max<int64_t>(1, n - first + 1)) {
        SglangSettings v = s;
        v.cpu_offload_gb = static_cast<double>(n);
        add(v, fmt::format("--cpu-offload-gb {}", n),
            fmt::format("{} GiB of weights per GPU copied in over PCIe every forward: much "
                        "slower",
                        n),
            6);
      }
    }
    return out;
  }

 private:
  const Inventory& inv_;
};

Result<EngineSettings> ReadEngineFlags(const FlagValues& given, EngineSettings base) {
  auto s = ReadFlags(given, ToSglangSettings(base));
  if (!s.ok()) return s.status();
  return ToEngineSettings(*s);
}

Status CheckVersion(const std::string& version) {
  auto v = ParseRelease(version);
  return v.ok() ? Status::Ok() : v.status();
}

Result<std::unique_ptr<PreparedModel>> Prepare(const Inventory& inv) {
  VRAMFIT_RETURN_IF_ERROR(CheckPlannable(inv, "SGLang"));
  return std::unique_ptr<PreparedModel>(std::make_unique<PreparedSglangModel>(inv));
}

Status CheckContext(const ModelSpec& spec, const EngineSettings& es, int64_t len,
                    std::string_view what) {
  const SglangSettings s = ToSglangSettings(es);
  const int64_t max = s.override_context_len > 0 ? s.override_context_len
                                                 : DerivedContextLen(spec);
  if (len <= max || s.allow_long_max_model_len) return Status::Ok();
  return Status::InvalidArgument(
      fmt::format("{} is beyond the model's context length ({}): {}", what, max,
                  ContextLenError(len, max)));
}

const char* FlagName(Setting s) {
  switch (s) {
    case Setting::kTensorParallel: return "--tp-size";
    case Setting::kPipelineParallel: return "--pp-size";
    case Setting::kMaxModelLen: return "--context-length";
    case Setting::kGpuMemoryUtilization: return "--mem-fraction-static";
    case Setting::kKvCacheDtype: return "--kv-cache-dtype";
    case Setting::kMaxNumSeqs: return "--max-running-requests";
    case Setting::kMaxNumBatchedTokens: return "--chunked-prefill-size";
    case Setting::kEnforceEager: return "--disable-cuda-graph";
  }
  return "";
}

// The fit knobs: each leaves a setting the user gave alone and changes nothing where SGLang's
// default is already the value. --max-running-requests is not one: it sizes only the request
// table (rows x context x 4 B), never the token pool.
bool Fp8Kv(const GpuSpec&, EngineSettings* s) {
  if (s->kv_cache_dtype != "auto") return false;
  s->kv_cache_dtype = "fp8_e4m3";
  return true;
}
bool NoGraphs(const GpuSpec&, EngineSettings* s) {
  if (s->enforce_eager) return false;
  s->enforce_eager = true;
  return true;
}
constexpr double kHighFraction = 0.9;
bool HighFraction(const GpuSpec& gpu, EngineSettings* s) {
  if (s->gpu_memory_utilization != 0) return false;
  SglangSettings d = ToSglangSettings(*s);
  const Rules rules;
  ApplyDefaults(rules, gpu, ModelSpec{}, &d);
  if (d.gpu_memory_utilization >= kHighFraction) return false;
  s->gpu_memory_utilization = kHighFraction;
  return true;
}
constexpr int64_t kSmallChunk = 2048;
bool SmallChunk(const GpuSpec& gpu, EngineSettings* s) {
  if (s->max_num_batched_tokens != 0 || DefaultChunkedPrefillSize(Rules{}, gpu) <= kSmallChunk) {
    return false;
  }
  s->max_num_batched_tokens = kSmallChunk;
  return true;
}

}  // namespace

const Engine& SglangEngine() {
  static const Engine kEngine = {
      .name = "sglang",
      .title = "SGLang",
      .flags = Flags(),
      .read_flags = ReadEngineFlags,
      .check_version = CheckVersion,
      .recognizes = IsLaunchCommand,
      .command_forms = "`python -m sglang.launch_server --model-path MODEL ...` or `sglang serve "
                       "--model-path MODEL ...`",
      .command_example = "python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp 2 "
                         "--mem-fraction-static 0.85",
      .read_command = ReadLaunchCommand,
      .prepare = Prepare,
      .model_max_len = [](const ModelSpec& spec, const EngineSettings& es) {
        const SglangSettings s = ToSglangSettings(es);
        return s.override_context_len > 0 ? s.override_context_len : DerivedContextLen(spec);
      },
      .check_context = CheckContext,
      .knobs = {{Setting::kKvCacheDtype, "fp8_e4m3", "a small accuracy cost", Fp8Kv},
                {Setting::kEnforceEager, "", "slower decoding", NoGraphs},
                {Setting::kGpuMemoryUtilization, "0.9", "less headroom", HighFraction},
                {Setting::kMaxNumBatchedTokens, "2048", "slower prefill", SmallChunk}},
      .flag_name = FlagName,
      .check_flags = CheckCommandFlags,
      .no_memory_effect = HasNoMemoryEffect,
  };
  return kEngine;
}

}  // namespace vramfit::sglang
