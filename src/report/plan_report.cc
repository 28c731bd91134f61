// Text and JSON renderers of plans, for any engine (see vramfit/report.h).
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>

#include "core/text.h"
#include "core/units.h"
#include "report/json_text.h"
#include "report/settings_json.h"
#include "vramfit/report.h"

namespace vramfit {
namespace {

using core::FormatBytes;
using core::GroupDigits;

// A budget within this of fraction x total is a fraction of the total (rounding of bytes).
constexpr double kSameFraction = 0.001;

// One GPU's figures as the plan JSON writes them (gpus[] and pipeline_stages[]).
nlohmann::ordered_json GpuJson(const GpuPlan& g, bool explain) {
  nlohmann::ordered_json x = {{"total_bytes", g.total_bytes},
                              {"budget_bytes", g.budget_bytes},
                              {"cuda_context_bytes", g.cuda_context_bytes},
                              {"weights_bytes", g.weights_bytes},
                              {"lora_bytes", g.lora_bytes},
                              {"load_peak_bytes", g.load_peak_bytes},
                              {"activation_peak_bytes", g.activation_peak_bytes},
                              {"non_torch_bytes", g.non_torch_bytes},
                              {"cudagraph_bytes", g.cudagraph_bytes},
                              {"kv_cache_bytes", g.kv_cache_bytes},
                              {"peak_bytes", g.peak_bytes},
                              {"device_used_bytes", g.device_used_bytes}};
  if (explain) {
    for (const Explained& e : g.explain)
      x["explain"][e.name] = {{"bytes", e.bytes}, {"formula", e.formula}};
  }
  return x;
}

// The pipeline stages, one line each: layers, card, weights, KV memory and what it holds alone.
std::string PipelineText(const Plan& p) {
  if (p.pipeline_stages.empty()) return "";
  std::string out = fmt::format(
      "pipeline stages (every stage gets the fewest KV blocks of any stage{}):\n",
      p.binding_stage >= 0 ? fmt::format("; stage {} binds", p.binding_stage) : "");
  for (size_t i = 0; i < p.pipeline_stages.size(); ++i) {
    const PipelineStage& s = p.pipeline_stages[i];
    const std::string layers =
        s.layers > 0 ? fmt::format("{}-{}", s.first_layer, s.first_layer + s.layers - 1) : "none";
    out += fmt::format(
        "  stage {:<2} layers {:<9} {:<28} total {:>9}  weights {:>9}  KV {:>9}  holds {} "
        "tokens{}{}\n",
        i, layers, core::Printable(s.gpu.name), FormatBytes(s.per_gpu.total_bytes),
        FormatBytes(s.per_gpu.weights_bytes), FormatBytes(s.per_gpu.kv_cache_bytes),
        GroupDigits(s.kv_cache_tokens),
        static_cast<int64_t>(i) == p.binding_stage ? "  binds" : "",
        s.failure_stage ? fmt::format("  FAILS at {}", StageName(*s.failure_stage)) : "");
  }
  return out;
}

}  // namespace

std::string WhatIfLine(const std::string& what_if, const std::string& model) {
  const std::string w = core::Printable(what_if);
  // An Ollama library name: the file is Ollama's to pull; the what-if stands in for it.
  if (what_if.find(" of Ollama's ") != std::string::npos) {
    return fmt::format("what-if: {}, the GGUF file llama.cpp would make of its catalog model, "
                       "standing in for the library's file (not read)",
                       w);
  }
  // A .gguf file that is not here, read by its name (inspect.cc InspectGgufName).
  if (what_if.find(" for the missing file ") != std::string::npos ||
      what_if.find(" for the Hub file ") != std::string::npos) {
    return fmt::format("what-if: {}, the GGUF file llama.cpp's quantizer would make of the "
                       "catalog model its name spells (give the file's path to read the file)",
                       w);
  }
  return fmt::format("what-if: {}{}, a checkpoint synthesized from the unquantized one "
                     "(quantize it before running the command)",
                     w, model.empty() ? "" : " of " + core::Printable(model));
}

std::string RenderPlanText(const Plan& p, const std::vector<Advice>& advice,
                           const PlanReportOptions& o) {
  std::string out;
  const GpuPlan g = p.gpus.empty() ? GpuPlan{} : p.gpus[0];
  bool mixed = false;  // cards that differ between pipeline stages
  for (const PipelineStage& s : p.pipeline_stages) {
    mixed = mixed || s.gpu.id != p.gpu.id || s.gpu.total_bytes != p.gpu.total_bytes;
  }
  if (mixed) {
    std::string cards;
    for (size_t i = 0; i < p.pipeline_stages.size(); ++i) {
      const GpuSpec& c = p.pipeline_stages[i].gpu;
      cards += fmt::format("{}stage {}: {} ({})", i ? ", " : "", i, core::Printable(c.name),
                           FormatBytes(c.total_bytes));
    }
    out += fmt::format("{} {} rules, {} GPUs, mixed: {}\n", p.engine_title, p.modelled_version,
                       p.gpu_count, cards);
  } else {
    out += fmt::format("{} {} rules, {} x {} ({} as CUDA reports it{})\n", p.engine_title,
                       p.modelled_version, p.gpu_count, p.gpu.name, FormatBytes(p.gpu.total_bytes),
                       p.gpu.confidence == "direct" || p.gpu.custom ? "" : ", " + p.gpu.confidence);
  }
  out += fmt::format("  {}\n", core::Printable(p.command));
  if (!p.what_if.empty()) out += "  " + WhatIfLine(p.what_if, "") + "\n";
  // Stages before the failing one are ok; the ones after it are never reached.
  size_t failed = p.stages.size();
  for (size_t i = 0; i < p.stages.size(); ++i) {
    if (p.failure_stage == p.stages[i].stage) {
      failed = i;
      break;
    }
  }
  const std::string which =
      p.pipeline_stages.empty() ? ""
      : !p.fits               ? " of the stage that fails"
                              : fmt::format(" of stage {}, which binds", p.binding_stage);
  // vLLM's fraction is of the card's total; SGLang's --mem-fraction-static is of the free
  // memory measured at start-up (after the CUDA context and NCCL): say which.
  const double util = p.resolved.gpu_memory_utilization;
  const bool of_total =
      g.total_bytes == 0 ||
      std::abs(static_cast<double>(g.budget_bytes) / static_cast<double>(g.total_bytes) - util) <
          kSameFraction;
  out += fmt::format("per GPU{} ({} total, budget {} = {:.2f} x {}):\n", which,
                     FormatBytes(g.total_bytes), FormatBytes(g.budget_bytes), util,
                     of_total ? "total" : "the free memory at start-up");
  for (size_t i = 0; i < p.stages.size(); ++i) {
    out += fmt::format("  {:<10} {:<62} {}\n", StageName(p.stages[i].stage),
                       core::Printable(p.stages[i].detail),
                       i < failed ? "ok" : i == failed ? "FAILS" : "-");
  }
  out += PipelineText(p);
  if (p.fits) {
    // Memory left out of the plan makes "fits" a claim it cannot back: never a plain fits.
    out += fmt::format("verdict: {}. GPU KV cache size: {} tokens; maximum concurrency for {} "
                       "tokens per request: {:.2f}x\n",
                       p.not_counted.empty() ? "fits" : "UNCERTAIN, fits only without what is "
                                                        "not counted",
                       GroupDigits(p.kv_cache_tokens),
                       GroupDigits(static_cast<uint64_t>(p.max_model_len)), p.max_concurrency);
    if (!p.not_counted.empty()) {
      std::string parts;
      for (const std::string& n : p.not_counted) {
        parts += (parts.empty() ? "" : "; ") + core::Printable(n);
      }
      out += fmt::format(
          "confidence: low. NOT COUNTED: {}. The {} of headroom must also hold it, which the "
          "plan cannot check: treat this as may not fit until it is counted\n",
          parts, FormatBytes(static_cast<uint64_t>(p.margin_bytes < 0 ? 0 : p.margin_bytes)));
    } else if (p.low_confidence()) {
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
  } else if (!p.fits && !p.refusal.empty()) {
    out += fmt::format("what fits: nothing, on any GPU: {}\n", core::Printable(p.refusal));
  } else if (!p.fits) {
    out += "what fits: nothing tried fits on this GPU; see `vramfit gpus` for other cards\n";
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
  j["refusal"] = p.refusal;  // "" unless the release refuses whatever the memory
  j["gpu"] = {{"id", p.gpu.id}, {"name", p.gpu.name}, {"count", p.gpu_count}};
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const GpuPlan& g : p.gpus) gpus.push_back(GpuJson(g, o.explain));
  j["gpus"] = std::move(gpus);
  j["kv_cache_tokens"] = p.kv_cache_tokens;
  j["max_concurrency"] = p.max_concurrency;
  j["max_model_len"] = p.max_model_len;
  j["estimated_max_model_len"] = p.estimated_max_model_len;
  j["kv_needed_bytes"] = p.kv_needed_bytes;
  j["kv_block_size"] = p.kv_block_size;
  j["kv_groups"] = p.kv_groups;
  // Pipeline parallel: the stage that binds the KV pool (null without stages) and every stage.
  j["binding_stage"] = p.binding_stage >= 0 ? nlohmann::ordered_json(p.binding_stage)
                                            : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (size_t i = 0; i < p.pipeline_stages.size(); ++i) {
    const PipelineStage& s = p.pipeline_stages[i];
    nlohmann::ordered_json x = {{"stage", i},
                                {"first_layer", s.first_layer},
                                {"layers", s.layers},
                                {"gpu", {{"id", s.gpu.id}, {"name", s.gpu.name}}}};
    x.update(GpuJson(s.per_gpu, false));
    x["kv_cache_tokens"] = s.kv_cache_tokens;
    x["kv_needed_bytes"] = s.kv_needed_bytes;
    x["failure_stage"] = s.failure_stage ? nlohmann::ordered_json(StageName(*s.failure_stage))
                                         : nlohmann::ordered_json(nullptr);
    x["binds"] = static_cast<int64_t>(i) == p.binding_stage;
    stages.push_back(std::move(x));
  }
  j["pipeline_stages"] = std::move(stages);
  j["margin_bytes"] = p.margin_bytes;
  j["uncertainty_bytes"] = p.uncertainty_bytes;
  j["confidence"] = p.low_confidence() ? "low" : "high";
  j["not_counted"] = p.not_counted;  // left out of the plan (unread inputs): confidence is low
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
