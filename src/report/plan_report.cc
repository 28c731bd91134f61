// Text and JSON renderers of vLLM plans (see vramfit/report.h).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/units.h"
#include "report/settings_json.h"
#include "vramfit/report.h"

namespace vramfit {
namespace {

using core::FormatBytes;
using core::GroupDigits;

const char* kStages[] = {"startup", "load", "profile", "kv_cache", "cudagraph"};

}  // namespace

std::string RenderPlanText(const VllmPlan& p, const std::vector<Advice>& advice, const PlanReportOptions& o) {
  std::string out;
  const VllmGpuPlan g = p.gpus.empty() ? VllmGpuPlan{} : p.gpus[0];
  out += fmt::format("vLLM {} rules, {} x {} ({} as CUDA reports it{})\n", p.modelled_version, p.gpu_count, p.gpu.name,
                     FormatBytes(p.gpu.total_bytes), p.gpu.confidence == "direct" || p.gpu.custom ? "" : ", " + p.gpu.confidence);
  out += fmt::format("  {}\n", p.command);
  const int failed = [&] {
    for (int i = 0; i < 5; ++i) if (p.failure_stage == kStages[i]) return i;
    return 5;
  }();
  auto verdict = [&](int i) { return i < failed ? "ok" : i == failed ? "FAILS" : "-"; };
  out += fmt::format("per GPU ({} total, budget {} = {:.2f} x total):\n", FormatBytes(g.total_bytes),
                     FormatBytes(g.budget_bytes), p.resolved.gpu_memory_utilization);
  out += fmt::format("  {:<10} {:<62} {}\n", "startup", fmt::format("CUDA context {}, {} requested", FormatBytes(g.cuda_context_bytes),
                                                                 FormatBytes(g.budget_bytes)), verdict(0));
  out += fmt::format("  {:<10} {:<62} {}\n", "load", fmt::format("weights {}, load peak {}", FormatBytes(g.weights_bytes),
                                                              FormatBytes(g.load_peak_bytes)), verdict(1));
  out += fmt::format("  {:<10} {:<62} {}\n", "profile", fmt::format("activation peak {}, non-torch {}", FormatBytes(g.activation_peak_bytes),
                                                                 FormatBytes(g.non_torch_bytes)), verdict(2));
  out += fmt::format("  {:<10} {:<62} {}\n", "kv_cache", fmt::format("available {}, one {}-token request needs {}", FormatBytes(g.kv_cache_bytes),
                                                                  GroupDigits(static_cast<uint64_t>(p.max_model_len)), FormatBytes(p.kv_needed_bytes)), verdict(3));
  out += fmt::format("  {:<10} {:<62} {}\n", "cudagraph", p.resolved.enforce_eager ? std::string("none (--enforce-eager)")
                                                          : fmt::format("graph pool {}", FormatBytes(g.cudagraph_bytes)), verdict(4));
  if (p.fits) {
    out += fmt::format("verdict: fits. GPU KV cache size: {} tokens; maximum concurrency for {} tokens per request: {:.2f}x\n",
                       GroupDigits(p.kv_cache_tokens), GroupDigits(static_cast<uint64_t>(p.max_model_len)), p.max_concurrency);
  } else {
    out += fmt::format("verdict: FAILS at {}: {}\n", p.failure_stage, p.failure_message);
  }
  if (!advice.empty()) {
    out += "what fits:\n";
    for (const Advice& a : advice) out += fmt::format("  {:<40} {} ({})\n", a.change, a.effect, a.cost);
  } else if (!p.fits) {
    out += "what fits: nothing tried fits on this GPU; see `vramfit gpus` for larger cards\n";
  }
  if (o.explain) {
    out += "explain:\n";
    for (const Explained& e : g.explain) out += fmt::format("  {:<16} {:>11}  {}\n", e.name, FormatBytes(e.bytes), e.formula);
  }
  for (const auto& n : p.notes) out += fmt::format("note: {}\n", n);
  return out;
}

std::string RenderPlanJson(const VllmPlan& p, const std::vector<Advice>& advice, const PlanReportOptions& o) {
  nlohmann::ordered_json j;
  j["schema"] = "vramfit.plan/1";
  j["engine"] = "vllm";
  j["modelled_version"] = p.modelled_version;
  j["fits"] = p.fits;
  j["failure_stage"] = p.failure_stage.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.failure_stage);
  j["failure_message"] = p.failure_message;
  j["gpu"] = {{"id", p.gpu.id}, {"name", p.gpu.name}, {"count", p.gpu_count}};
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const VllmGpuPlan& g : p.gpus) {
    nlohmann::ordered_json x = {{"total_bytes", g.total_bytes}, {"budget_bytes", g.budget_bytes},
                                {"cuda_context_bytes", g.cuda_context_bytes}, {"weights_bytes", g.weights_bytes},
                                {"load_peak_bytes", g.load_peak_bytes}, {"activation_peak_bytes", g.activation_peak_bytes},
                                {"non_torch_bytes", g.non_torch_bytes}, {"cudagraph_bytes", g.cudagraph_bytes},
                                {"kv_cache_bytes", g.kv_cache_bytes}};
    if (o.explain) {
      for (const Explained& e : g.explain) x["explain"][e.name] = {{"bytes", e.bytes}, {"formula", e.formula}};
    }
    gpus.push_back(std::move(x));
  }
  j["gpus"] = std::move(gpus);
  j["kv_cache_tokens"] = p.kv_cache_tokens;
  j["max_concurrency"] = p.max_concurrency;
  j["max_model_len"] = p.max_model_len;
  j["estimated_max_model_len"] = p.estimated_max_model_len;
  j["kv_needed_bytes"] = p.kv_needed_bytes;
  j["kv_block_size"] = p.kv_layout.block_size;
  j["kv_groups"] = p.kv_layout.groups.size();
  j["settings"] = report::SettingsJson(p.resolved);
  nlohmann::ordered_json adv = nlohmann::ordered_json::array();
  for (const Advice& a : advice) adv.push_back({{"change", a.change}, {"effect", a.effect}, {"cost", a.cost}, {"command", a.plan.command}});
  j["advice"] = std::move(adv);
  j["command"] = p.command;
  j["notes"] = p.notes;
  return j.dump(2) + "\n";
}

}  // namespace vramfit
