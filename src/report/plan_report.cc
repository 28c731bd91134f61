// Text and JSON renderers of plans, for any engine (see vramfit/report.h).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/text.h"
#include "core/units.h"
#include "report/json_text.h"
#include "report/settings_json.h"
#include "vramfit/report.h"

namespace vramfit {
namespace {

using core::FormatBytes;
using core::GroupDigits;

}  // namespace

std::string RenderPlanText(const Plan& p, const std::vector<Advice>& advice,
                           const PlanReportOptions& o) {
  std::string out;
  const GpuPlan g = p.gpus.empty() ? GpuPlan{} : p.gpus[0];
  out += fmt::format("{} {} rules, {} x {} ({} as CUDA reports it{})\n", p.engine_title,
                     p.modelled_version, p.gpu_count, p.gpu.name, FormatBytes(p.gpu.total_bytes),
                     p.gpu.confidence == "direct" || p.gpu.custom ? "" : ", " + p.gpu.confidence);
  out += fmt::format("  {}\n", core::Printable(p.command));
  if (!p.what_if.empty()) {
    out += fmt::format("  what-if: {}, a checkpoint synthesized from the unquantized one "
                       "(quantize it before running the command)\n",
                       core::Printable(p.what_if));
  }
  // Stages before the failing one are ok; the ones after it are never reached.
  size_t failed = p.stages.size();
  for (size_t i = 0; i < p.stages.size(); ++i) {
    if (p.failure_stage == p.stages[i].stage) {
      failed = i;
      break;
    }
  }
  out +=
      fmt::format("per GPU ({} total, budget {} = {:.2f} x total):\n", FormatBytes(g.total_bytes),
                  FormatBytes(g.budget_bytes), p.resolved.gpu_memory_utilization);
  for (size_t i = 0; i < p.stages.size(); ++i) {
    out += fmt::format("  {:<10} {:<62} {}\n", StageName(p.stages[i].stage),
                       core::Printable(p.stages[i].detail),
                       i < failed ? "ok" : i == failed ? "FAILS" : "-");
  }
  if (p.fits) {
    out += fmt::format("verdict: fits. GPU KV cache size: {} tokens; maximum concurrency for {} "
                       "tokens per request: {:.2f}x\n", GroupDigits(p.kv_cache_tokens),
                       GroupDigits(static_cast<uint64_t>(p.max_model_len)), p.max_concurrency);
    if (p.low_confidence()) {
      out += fmt::format(
          "confidence: low. {} of headroom is inside the plan's measured error (±{}); to be "
          "safe, take a change below that leaves more\n",
          FormatBytes(static_cast<uint64_t>(p.margin_bytes)), FormatBytes(p.uncertainty_bytes));
    }
  } else {
    out += fmt::format("verdict: FAILS at {}: {}\n",
                       p.failure_stage ? StageName(*p.failure_stage) : "",
                       core::Printable(p.failure_message));
  }
  if (!advice.empty()) {
    out += "what fits:\n";
    for (const Advice& a : advice) {
      out += fmt::format("  {:<40} {} ({})\n", core::Printable(a.change),
                         core::Printable(a.effect), core::Printable(a.cost));
    }
  } else if (!p.fits) {
    out += "what fits: nothing tried fits on this GPU; see `vramfit gpus` for larger cards\n";
  }
  if (o.explain) {
    out += "explain:\n";
    for (const Explained& e : g.explain) {
      out += fmt::format("  {:<16} {:>11}  {}\n", e.name, FormatBytes(e.bytes), e.formula);
    }
  }
  for (const auto& n : p.notes) out += fmt::format("note: {}\n", core::Printable(n));
  return out;
}

std::string RenderPlanJson(const Plan& p, const std::vector<Advice>& advice,
                           const PlanReportOptions& o) {
  nlohmann::ordered_json j;
  j["schema"] = "vramfit.plan/1";
  j["engine"] = p.engine;
  j["modelled_version"] = p.modelled_version;
  if (!p.what_if.empty()) j["what_if"] = p.what_if;  // only on what-if plans
  j["fits"] = p.fits;
  j["failure_stage"] = p.failure_stage ? nlohmann::ordered_json(StageName(*p.failure_stage))
                                       : nlohmann::ordered_json(nullptr);
  j["failure_message"] = p.failure_message;
  j["gpu"] = {{"id", p.gpu.id}, {"name", p.gpu.name}, {"count", p.gpu_count}};
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const GpuPlan& g : p.gpus) {
    nlohmann::ordered_json x = {{"total_bytes", g.total_bytes},
                                {"budget_bytes", g.budget_bytes},
                                {"cuda_context_bytes", g.cuda_context_bytes},
                                {"weights_bytes", g.weights_bytes},
                                {"load_peak_bytes", g.load_peak_bytes},
                                {"activation_peak_bytes", g.activation_peak_bytes},
                                {"non_torch_bytes", g.non_torch_bytes},
                                {"cudagraph_bytes", g.cudagraph_bytes},
                                {"kv_cache_bytes", g.kv_cache_bytes},
                                {"peak_bytes", g.peak_bytes},
                                {"device_used_bytes", g.device_used_bytes}};
    if (o.explain) {
      for (const Explained& e : g.explain)
        x["explain"][e.name] = {{"bytes", e.bytes}, {"formula", e.formula}};
    }
    gpus.push_back(std::move(x));
  }
  j["gpus"] = std::move(gpus);
  j["kv_cache_tokens"] = p.kv_cache_tokens;
  j["max_concurrency"] = p.max_concurrency;
  j["max_model_len"] = p.max_model_len;
  j["estimated_max_model_len"] = p.estimated_max_model_len;
  j["kv_needed_bytes"] = p.kv_needed_bytes;
  j["kv_block_size"] = p.kv_block_size;
  j["kv_groups"] = p.kv_groups;
  j["margin_bytes"] = p.margin_bytes;
  j["uncertainty_bytes"] = p.uncertainty_bytes;
  j["confidence"] = p.low_confidence() ? "low" : "high";
  j["settings"] = report::SettingsJson(p.resolved);
  nlohmann::ordered_json adv = nlohmann::ordered_json::array();
  for (const Advice& a : advice)
    adv.push_back({{"change", a.change},
                   {"effect", a.effect},
                   {"cost", a.cost},
                   {"command", a.plan.command}});
  j["advice"] = std::move(adv);
  j["command"] = p.command;
  j["notes"] = p.notes;
  return report::JsonText(j);
}

}  // namespace vramfit
