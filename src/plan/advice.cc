// vLLM advice (see vramfit/advice.h): candidate changes, each re-planned; only those that fit
// are returned, the least costly first.
#include "vramfit/advice.h"

#include <fmt/format.h>

#include <cmath>

#include "core/units.h"

namespace vramfit {
namespace {

using core::FormatBytes;
using core::GroupDigits;

std::string Effect(const VllmPlan& p) {
  const uint64_t kv = p.gpus.empty() ? 0 : p.gpus[0].kv_cache_bytes;
  return fmt::format("fits: KV cache {} per GPU, {} tokens, {:.2f}x concurrency at {} tokens", FormatBytes(kv),
                     GroupDigits(p.kv_cache_tokens), p.max_concurrency, GroupDigits(static_cast<uint64_t>(p.max_model_len)));
}

}  // namespace

std::vector<Advice> AdviseVllm(const Inventory& inv, const GpuSpec& gpu, const VllmSettings& settings,
                               const VllmPlan& plan) {
  std::vector<Advice> out;
  const auto profile = ProfileVllmWeights(inv);  // once for every candidate
  auto attempt = [&](VllmSettings s, std::string change, std::string cost) {
    auto p = PlanVllm(inv, *profile, gpu, s);
    if (!p.ok() || !p->fits) return;
    out.push_back({std::move(change), Effect(*p), std::move(cost), s, *p});
  };
  const std::string& stage = plan.failure_stage;
  if (stage == "kv_cache" || stage.empty()) {
    if (plan.estimated_max_model_len > 0) {
      // Round down to a multiple of 1024 tokens for a tidy flag.
      int64_t len = plan.estimated_max_model_len >= 2048 ? plan.estimated_max_model_len / 1024 * 1024
                                                         : plan.estimated_max_model_len;
      VllmSettings s = settings;
      s.max_model_len = len;
      attempt(s, fmt::format("--max-model-len {}", len), "shorter context per request");
    }
    if (settings.kv_cache_dtype == "auto") {
      VllmSettings s = settings;
      s.kv_cache_dtype = "fp8";
      attempt(s, "--kv-cache-dtype fp8", "halves KV bytes; a small accuracy cost");
    }
  }
  if (stage == "kv_cache" || stage == "cudagraph" || stage == "profile") {
    if (!settings.enforce_eager) {
      VllmSettings s = settings;
      s.enforce_eager = true;
      attempt(s, "--enforce-eager", fmt::format("frees the {} CUDA graph pool; slower decoding",
                                                FormatBytes(plan.gpus.empty() ? 0 : plan.gpus[0].cudagraph_bytes)));
    }
    VllmSettings s = settings;
    const int64_t seqs = plan.resolved.max_num_seqs;
    if (seqs > 16) {
      s.max_num_seqs = seqs / 4;
      attempt(s, fmt::format("--max-num-seqs {}", s.max_num_seqs), "fewer concurrent requests, smaller sampler warm-up");
    }
  }
  if (stage == "startup") {
    VllmSettings s = settings;
    const double u = plan.resolved.gpu_memory_utilization;
    for (double v = u - 0.02; v >= 0.5; v -= 0.02) {
      s.gpu_memory_utilization = std::floor(v * 100) / 100;
      auto p = PlanVllm(inv, *profile, gpu, s);
      if (p.ok() && p->failure_stage != "startup") {
        if (p->fits) out.push_back({fmt::format("--gpu-memory-utilization {:.2f}", s.gpu_memory_utilization), Effect(*p),
                                    "less memory for the KV cache", s, *p});
        break;
      }
    }
  }
  // More GPUs: tensor parallel 2, 4, 8.
  if (!out.empty() && stage.empty()) return out;
  for (int64_t tp = settings.tensor_parallel_size * 2; tp <= 8; tp *= 2) {
    VllmSettings s = settings;
    s.tensor_parallel_size = tp;
    auto p = PlanVllm(inv, *profile, gpu, s);
    if (p.ok() && p->fits) {
      out.push_back({fmt::format("--tensor-parallel-size {} ({} GPUs)", tp, tp), Effect(*p),
                     fmt::format("{} more GPU(s)", tp - settings.tensor_parallel_size), s, *p});
      break;
    }
  }
  return out;
}

}  // namespace vramfit
