// `vramfit fit` as text (a Pareto table and the chosen command) and JSON (vramfit.fit/1).
#include <fmt/format.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "core/text.h"
#include "core/units.h"
#include "report/json_text.h"
#include "report/settings_json.h"
#include "vramfit/report.h"

namespace vramfit {
namespace {

using core::GroupDigits;

const char* GoalName(FitGoal g) {
  switch (g) {
    case FitGoal::kContext: return "context";
    case FitGoal::kConcurrency: return "concurrency";
    case FitGoal::kGpus: return "gpus";
  }
  return "context";
}

std::string GivenUp(const FitOption& o) {
  if (o.given_up.empty()) return "nothing";
  std::string s;
  for (const auto& g : o.given_up) s += (s.empty() ? "" : "; ") + g;
  return s;
}

nlohmann::ordered_json OptionJson(const FitOption& o) {
  nlohmann::ordered_json j;
  j["model"] = o.model;
  j["gpu"] = {{"id", o.gpu.id}, {"name", o.gpu.name}, {"total_bytes", o.gpu.total_bytes}};
  j["gpus"] = o.gpus;
  j["max_model_len"] = o.context;
  j["max_concurrency"] = o.concurrency;
  j["served_concurrency"] = o.served;
  j["kv_cache_tokens"] = o.plan.kv_cache_tokens;
  j["kv_cache_bytes"] = o.plan.gpus.empty() ? 0 : o.plan.gpus[0].kv_cache_bytes;
  j["given_up"] = o.given_up;
  j["settings"] = report::SettingsJson(o.settings);
  j["command"] = o.command;
  return j;
}

}  // namespace

std::string RenderFitText(const FitResult& r, const FitReportOptions& o) {
  std::string out;
  out += fmt::format("goal: {}; {} plans evaluated\n", GoalName(o.goal), GroupDigits(r.plans));
  for (const std::string& n : r.notes) out += fmt::format("note: {}\n", core::Printable(n));
  if (!r.met) {
    out += fmt::format("cannot be met: {}\n", core::Printable(r.unmet));
    if (r.nearest) out += fmt::format("nearest:\n  {}\n", core::Printable(r.nearest->command));
    return out;
  }
  out += fmt::format("{:<4} {:>10} {:>12} {:>10}  {:<22} {}\n", "", "CONTEXT", "CONCURRENCY",
                     "KV GiB/GPU", "GPUS", "GIVEN UP");
  for (size_t i = 0; i < r.options.size(); ++i) {
    const FitOption& x = r.options[i];
    const double kv =
        x.plan.gpus.empty() ? 0 : static_cast<double>(x.plan.gpus[0].kv_cache_bytes) / core::kGiBf;
    out += fmt::format("{:<4} {:>10} {:>11.2f}x {:>10.2f}  {:<22} {}\n",
                       i == 0 ? "best" : fmt::format("{}", i + 1),
                       GroupDigits(static_cast<uint64_t>(x.context)), x.concurrency, kv,
                       fmt::format("{} x {}", x.gpus, x.gpu.id), core::Printable(GivenUp(x)));
  }
  const FitOption& b = r.options[0];
  const std::string command = core::Printable(b.command);
  out += fmt::format("command (best):\n  {}\n", command);
  // The release the search planned with: check plans the newest one unless told.
  const std::string release = b.settings.version.empty()
                                  ? std::string()
                                  : fmt::format(" --engine {}@{}", r.engine,
                                                core::Printable(b.settings.version));
  out += fmt::format("check it: vramfit check --gpu {}{} -- {}\n", b.gpu.id, release, command);
  if (b.served + 1e-9 < b.concurrency) {
    out += fmt::format(
        "note: max_num_seqs {} caps the requests served at once below the KV capacity ({:.2f}x)\n",
        b.settings.max_num_seqs, b.concurrency);
  }
  out += fmt::format(
      "note: CONCURRENCY is {}'s \"Maximum concurrency\" at the row's context; every "
      "row is a plan that fits\n",
      r.engine_title);
  return out;
}

std::string RenderFitJson(const FitResult& r, const FitReportOptions& o) {
  nlohmann::ordered_json j;
  j["schema"] = "vramfit.fit/1";
  j["engine"] = r.engine;
  j["goal"] = GoalName(o.goal);
  j["met"] = r.met;
  j["unmet"] = r.met ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(r.unmet);
  j["plans_evaluated"] = r.plans;
  j["notes"] = r.notes;
  j["best"] = r.met ? OptionJson(r.options[0]) : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json opts = nlohmann::ordered_json::array();
  for (const FitOption& x : r.options) opts.push_back(OptionJson(x));
  j["options"] = std::move(opts);
  j["nearest"] = r.nearest ? OptionJson(*r.nearest) : nlohmann::ordered_json(nullptr);
  return report::JsonText(j);
}

std::string RenderGpusTableText(const std::vector<GpusTableRow>& rows, const GpusTableInfo& info) {
  const size_t counts = rows.empty() ? 0 : rows[0].longest.size();
  std::string out = fmt::format("longest context of {} on each catalog GPU ({} defaults, one "
                                "request; {} plans)\n", core::Printable(info.model),
                                info.engine_title, GroupDigits(info.plans));
  size_t id_width = 13;  // the longest catalog id and a space, at least
  for (const GpusTableRow& r : rows) id_width = std::max(id_width, r.gpu.id.size() + 1);
  out += fmt::format("{:<{}}", "GPU", id_width);
  for (size_t c = 1; c <= counts; ++c) out += fmt::format(" {:>9}", fmt::format("x{}", c));
  out += "\n";
  for (const GpusTableRow& r : rows) {
    out += fmt::format("{:<{}}", r.gpu.id, id_width);
    for (int64_t v : r.longest) {
      out += fmt::format(" {:>9}", v < 0       ? "invalid"
                                   : v == 0    ? "-"
                                   : v >= 1024 ? fmt::format("{}k", v / 1024)
                                               : fmt::format("{}", v));
    }
    out += "\n";
  }
  out +=
      "-: does not fit; invalid: no tensor/pipeline layout of that count divides the model; Nk = N "
      "x 1024 tokens "
      "(rounded down). Layouts use tensor parallel over all cards where valid, else pipeline "
      "stages.\n";
  return out;
}

std::string RenderGpusTableJson(const std::vector<GpusTableRow>& rows, const GpusTableInfo& info) {
  nlohmann::ordered_json j;
  j["schema"] = "vramfit.fit-gpus-table/1";
  j["model"] = info.model;
  j["plans_evaluated"] = info.plans;
  nlohmann::ordered_json arr = nlohmann::ordered_json::array();
  for (const GpusTableRow& r : rows) {
    nlohmann::ordered_json counts = nlohmann::ordered_json::array();
    for (size_t c = 0; c < r.longest.size(); ++c) {
      counts.push_back({{"gpus", c + 1},
                        {"max_model_len", r.longest[c] < 0 ? nlohmann::ordered_json(nullptr)
                                                           : nlohmann::ordered_json(r.longest[c])},
                        {"layout", r.layout[c]}});
    }
    arr.push_back(
        {{"gpu", r.gpu.id}, {"total_bytes", r.gpu.total_bytes}, {"counts", std::move(counts)}});
  }
  j["gpus"] = std::move(arr);
  return report::JsonText(j);
}

}  // namespace vramfit
