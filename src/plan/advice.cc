// Advice (see vramfit/advice.h): candidate changes, each re-planned; only those that fit are
// returned, the least costly first.
#include "vramfit/advice.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/units.h"

namespace vramfit {
namespace {

using core::FormatBytes;
using core::GroupDigits;

constexpr int64_t kTidyUnit = 1024;
// Utilization steps tried against a startup failure, and the floor below which it is not.
constexpr double kUtilizationStep = 0.02;
constexpr double kLowestUtilization = 0.5;
// Fewer sequences: a quarter of the resolved limit, above this many.
constexpr int64_t kFewestSeqsToCut = 16;
constexpr int64_t kMostTensorParallel = 8;  // GPUs in one node
constexpr int64_t kMostPipelineStages = 4;  // nodes a multi-node layout spans at most

int64_t CeilDivide(int64_t a, int64_t b) { return (a + b - 1) / b; }

// "--max-model-len 8192"; a setting spelled as an environment assignment ("NAME=") takes its
// value without a space ("OLLAMA_NUM_PARALLEL=16").
std::string Spell(const std::string& flag, const std::string& value) {
  return flag.ends_with('=') ? flag + value : flag + " " + value;
}

std::string Effect(const Plan& p) {
  const uint64_t kv = p.gpus.empty() ? 0 : p.gpus[0].kv_cache_bytes;
  return fmt::format("fits: KV cache {} per GPU, {} tokens, {:.2f}x concurrency at {} tokens",
                     FormatBytes(kv), GroupDigits(p.kv_cache_tokens), p.max_concurrency,
                     GroupDigits(static_cast<uint64_t>(p.max_model_len)));
}

}  // namespace

std::vector<Advice> AdviseAlternatives(const Engine& engine,
                                       const std::vector<Alternative>& alternatives,
                                       const GpuSpec& gpu, const EngineSettings& settings,
                                       const Plan& plan) {
  std::vector<Advice> out;
  if (plan.fits || (plan.failure_stage != Stage::kLoad && plan.failure_stage != Stage::kKvCache)) {
    return out;
  }
  for (const Alternative& a : alternatives) {
    if (a.inventory == nullptr) continue;
    auto model = engine.prepare(*a.inventory);
    if (!model.ok()) continue;
    EngineSettings s = settings;
    s.quantization.clear();  // the checkpoint's own
    auto p = (*model)->MakePlan(gpu, s);
    if (!p.ok() || !p->fits) continue;
    const QuantSummary& q = a.inventory->quantization;
    const std::string format =
        q.method == "none" ? "16-bit weights" : fmt::format("{} {}-bit weights", q.method, q.bits);
    out.push_back({fmt::format("{} ({})", a.name, format), Effect(*p),
                   fmt::format("{} per GPU instead of {}",
                               FormatBytes(p->gpus.empty() ? 0 : p->gpus[0].weights_bytes),
                               FormatBytes(plan.gpus.empty() ? 0 : plan.gpus[0].weights_bytes)),
                   s, *p});
  }
  std::stable_sort(out.begin(), out.end(), [](const Advice& x, const Advice& y) {
    return x.plan.gpus[0].weights_bytes < y.plan.gpus[0].weights_bytes;
  });
  return out;
}

int64_t TidyContextLength(int64_t tokens) {
  return tokens >= 2 * kTidyUnit ? tokens / kTidyUnit * kTidyUnit : tokens;
}

std::vector<Advice> Advise(const Engine& engine, const PreparedModel& model, const GpuSpec& gpu,
                           const EngineSettings& settings, const Plan& plan) {
  std::vector<Advice> out;
  auto flag = [&](Setting s) { return std::string(engine.flag_name(s)); };
  const std::optional<Stage> stage = plan.failure_stage;
  // `more_tokens`: for a plan that fits already, only a change whose cache holds more tokens
  // (llama.cpp and Ollama size the cache by the context asked for, whatever its type).
  auto attempt = [&](EngineSettings s, std::string change, std::string cost,
                     bool more_tokens = false) {
    auto p = model.MakePlan(gpu, s);
    if (!p.ok() || !p->fits) return;
    if (more_tokens && !stage && p->kv_cache_tokens <= plan.kv_cache_tokens) return;
    out.push_back({std::move(change), Effect(*p), std::move(cost), s, *p});
  };
  // The engine's own ways out, asked once: advice below defers to them where they say the same.
  const std::vector<Remedy> remedies = stage || plan.low_confidence()
                                           ? model.Remedies(gpu, settings, plan)
                                           : std::vector<Remedy>{};
  if (stage == Stage::kKvCache || !stage) {
    if (plan.estimated_max_model_len > 0) {
      const int64_t len = TidyContextLength(plan.estimated_max_model_len);
      EngineSettings s = settings;
      s.max_model_len = len;
      attempt(s, Spell(flag(Setting::kMaxModelLen), std::to_string(len)),
              "shorter context per request");
    }
    // A smaller KV cache type, in the engine's own words: its fit knob for the KV dtype
    // (vLLM's fp8, SGLang's fp8_e4m3, llama.cpp's q8_0 for K and V), unless one of its own
    // remedies already says it (Ollama's names the flash attention it needs).
    const auto kv = std::find_if(engine.knobs.begin(), engine.knobs.end(), [](const Knob& k) {
      return k.setting == Setting::kKvCacheDtype;
    });
    EngineSettings s = settings;
    if (settings.kv_cache_dtype == "auto" && kv != engine.knobs.end() && kv->apply(gpu, &s)) {
      // The knob may spell its value for the release (vLLM 0.3-0.4.0: fp8_e5m2, not fp8).
      const bool respelled = s.kv_cache_dtype != kv->value &&
                             std::string_view(s.kv_cache_dtype).starts_with("fp8");
      const std::string change =
          Spell(flag(Setting::kKvCacheDtype), respelled ? s.kv_cache_dtype : kv->value);
      const bool said = std::any_of(remedies.begin(), remedies.end(), [&](const Remedy& r) {
        return r.change.find(change) != std::string::npos;
      });
      const bool fp8 = std::string_view(kv->value).starts_with("fp8");
      if (!said) {
        attempt(s, change, fp8 ? "halves KV bytes; a small accuracy cost" : kv->cost, true);
      }
    }
  }
  if (stage == Stage::kKvCache || stage == Stage::kCudaGraph || stage == Stage::kProfile) {
    if (!settings.enforce_eager) {
      EngineSettings s = settings;
      s.enforce_eager = true;
      attempt(s, flag(Setting::kEnforceEager),
              fmt::format("frees the {} CUDA graph pool; slower decoding",
                          FormatBytes(plan.gpus.empty() ? 0 : plan.gpus[0].cudagraph_bytes)));
    }
    EngineSettings s = settings;
    const int64_t seqs = plan.resolved.max_num_seqs;
    if (seqs > kFewestSeqsToCut) {
      s.max_num_seqs = seqs / 4;
      attempt(s, Spell(flag(Setting::kMaxNumSeqs), std::to_string(s.max_num_seqs)),
              "fewer concurrent requests, smaller sampler warm-up");
    }
  }
  if (stage == Stage::kStartup) {
    EngineSettings s = settings;
    const double u = plan.resolved.gpu_memory_utilization;
    for (double v = u - kUtilizationStep; v >= kLowestUtilization; v -= kUtilizationStep) {
      s.gpu_memory_utilization = std::floor(v * 100) / 100;
      auto p = model.MakePlan(gpu, s);
      if (p.ok() && p->failure_stage != Stage::kStartup) {
        if (p->fits) {
          out.push_back({fmt::format("{} {:.2f}", flag(Setting::kGpuMemoryUtilization),
                                     s.gpu_memory_utilization),
                         Effect(*p), "less memory for the KV cache", s, *p});
        }
        break;
      }
    }
  }
  // The engine's own ways out (expert parallelism, CPU offload, another dtype, ...); of each
  // group of alternatives the first that fits.
  // A plan that fits inside its own measured error gets the changes that fit with margin.
  if (stage || plan.low_confidence()) {
    std::set<int> groups_done;
    for (const Remedy& r : remedies) {
      if (r.group > 0 && groups_done.count(r.group)) continue;
      auto p = model.MakePlan(gpu, r.settings);
      if (!p.ok() || !p->fits || (!stage && p->low_confidence())) continue;
      if (r.group > 0) groups_done.insert(r.group);
      out.push_back({r.change, Effect(*p), r.cost, r.settings, *p});
    }
  }
  // More GPUs: tensor parallel 2, 4, 8 on one node, then pipeline stages of 8 across nodes.
  // Every GPU of the layout counts (TP x PP x DP).
  if (!out.empty() && !stage) return out;
  // GPUs as the engine's plan counts them: TP x PP x DP for vLLM, but SGLang's DP attention
  // splits the TP group instead of multiplying it (Plan::gpu_count).
  const int64_t pp = settings.pipeline_parallel_size;
  const int64_t now = plan.gpu_count;
  // The layout's spelling: "--tensor-parallel-size 4 (4 GPUs)", with the stages where they
  // change and the nodes past one.
  auto layout = [&](int64_t tp, int64_t stages, int64_t n) {
    // An engine that spells both with one word (llama.cpp and Ollama use every GPU they see,
    // "GPUs:") has one count: the plan's, TP x the GPUs already visible.
    const bool one_count = flag(Setting::kTensorParallel) == flag(Setting::kPipelineParallel);
    std::string change =
        fmt::format("{} {}", flag(Setting::kTensorParallel), one_count ? n : tp);
    if (stages != pp && !one_count) {
      change += fmt::format(" {} {}", flag(Setting::kPipelineParallel), stages);
    }
    return change;
  };
  auto gpus = [](int64_t n) {
    return fmt::format("({} GPUs{})", n,
                       n > kMostTensorParallel
                           ? fmt::format(", {} nodes of {}", CeilDivide(n, kMostTensorParallel),
                                         kMostTensorParallel)
                           : "");
  };
  auto more = [&](int64_t tp, int64_t stages) {
    EngineSettings s = settings;
    s.tensor_parallel_size = tp;
    s.pipeline_parallel_size = stages;
    auto p = model.MakePlan(gpu, s);
    if (!p.ok()) return false;
    if (!p->fits) {
      // A load that fails on these GPUs but fits on more of them, where the larger layout then
      // fails at a later stage (the KV cache, the graphs): that layout with the first change
      // that fits there, said beside the larger layout that fits alone (the search goes on).
      if (stage == Stage::kLoad && p->failure_stage && *p->failure_stage != Stage::kLoad &&
          *p->failure_stage != Stage::kStartup) {
        for (const Advice& a : Advise(engine, model, gpu, s, *p)) {
          if (a.settings.tensor_parallel_size != tp ||
              a.settings.pipeline_parallel_size != stages) {
            continue;
          }
          const int64_t n = a.plan.gpu_count;
          out.push_back({fmt::format("{} {} {}", layout(tp, stages, n), a.change, gpus(n)),
                         a.effect, fmt::format("{} more GPU(s); {}", n - now, a.cost), a.settings,
                         a.plan});
          break;
        }
      }
      return false;
    }
    // A plan that fits already gains from more GPUs only if their KV cache holds more tokens
    // (llama.cpp and Ollama size it by the context asked for, whatever the GPUs): else say
    // nothing, and more GPUs than these would not gain either.
    if (!stage && p->kv_cache_tokens <= plan.kv_cache_tokens) return true;
    const int64_t n = p->gpu_count;
    out.push_back({fmt::format("{} {}", layout(tp, stages, n), gpus(n)), Effect(*p),
                   fmt::format("{} more GPU(s)", n - now), s, *p});
    return true;
  };
  bool found = false;
  // Powers of two above the TP asked for (from TP 3: 4, then 8).
  int64_t first = 1;
  while (first <= settings.tensor_parallel_size) first *= 2;
  for (int64_t tp = first; tp <= kMostTensorParallel && !found; tp *= 2) {
    found = more(tp, pp);
  }
  // Multi-node: TP 8 within a node, pipeline stages across nodes.
  for (int64_t stages = pp * 2; !found && stages <= kMostPipelineStages; stages *= 2) {
    found = more(std::max(settings.tensor_parallel_size, kMostTensorParallel), stages);
  }
  return out;
}

}  // namespace vramfit
