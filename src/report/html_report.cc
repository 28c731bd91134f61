// The HTML reports of plan/check, fit, inspect and doctor (see vramfit/report_html.h). Each is
// drawn from the JSON its command prints, parsed back here, so the page's bars and its
// embedded JSON are the same numbers; the engine is known only by the strings the plan carries.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/units.h"
#include "report/html_page.h"
#include "vramfit/report_html.h"

namespace vramfit {
namespace {

using Json = nlohmann::ordered_json;
using core::FormatBytes;
using report::html::Bar;
using report::html::Esc;
using report::html::Num;
using report::html::Rule;
using report::html::Segment;

Json Parse(const std::string& text) { return Json::parse(text, nullptr, false); }

const Json& At(const Json& j, const char* key) {
  static const Json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

uint64_t U64(const Json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) return static_cast<uint64_t>(std::max<int64_t>(0, v.get<int64_t>()));
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return d > 0 && d < 1.8e19 ? static_cast<uint64_t>(d) : 0;
  }
  return 0;
}
uint64_t U64(const Json& j, const char* key) { return U64(At(j, key)); }

double Dbl(const Json& j, const char* key) {
  const Json& v = At(j, key);
  return v.is_number() ? v.get<double>() : 0;
}

std::string Str(const Json& j, const char* key) {
  const Json& v = At(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

// A page that says the report could not be drawn (never expected: the JSON is our own).
std::string BrokenPage(std::string_view kind, const std::string& json) {
  return report::html::Page(kind, "report", json,
                            "<h1>vramfit</h1><p>The report's JSON could not be read back.</p>\n");
}

// ---- plan ----

// The memory a plan counts on each GPU, bottom to top, and the stage that allocates it.
struct Part {
  const char* field;  // "<field>_bytes" in gpus[], "<field>" in explain{}
  const char* label;
  const char* css;
  Stage stage;
};
constexpr Part kParts[] = {
    {"cuda_context", "CUDA context", "seg-startup", Stage::kStartup},
    {"weights", "weights", "seg-load", Stage::kLoad},
    {"activation_peak", "activation peak", "seg-profile", Stage::kProfile},
    {"non_torch", "non-torch memory", "seg-nontorch", Stage::kProfile},
    {"kv_cache", "KV cache", "seg-kv", Stage::kKvCache},
    {"cudagraph", "CUDA graphs", "seg-graph", Stage::kCudaGraph},
};

Segment PartSegment(const Json& gpu, size_t index, const char* field, const char* label,
                    const char* css, bool unreached) {
  Segment s;
  s.key = fmt::format("gpus.{}.{}_bytes", index, field);
  s.bytes = U64(gpu, (std::string(field) + "_bytes").c_str());
  s.css = css;
  s.label = label;
  const Json& e = At(At(gpu, "explain"), field);
  if (e.is_object()) {
    s.hover = Str(e, "formula");
    s.explain = field;
  }
  s.unreached = unreached;
  return s;
}

bool Unreached(const Plan& p, Stage s) {
  return p.failure_stage && static_cast<int>(s) > static_cast<int>(*p.failure_stage);
}

std::string PlanBars(const Plan& p, const Json& gpus) {
  constexpr int64_t kMaxBars = 8;
  const size_t n = gpus.size();
  std::vector<Bar> bars;
  const int64_t count = std::clamp<int64_t>(p.gpu_count, 1, kMaxBars);
  for (int64_t i = 0; i < count; ++i) {
    const size_t index = std::min(static_cast<size_t>(i), n - 1);
    Bar b;
    b.label = fmt::format("GPU {}", i);
    for (const Part& part : kParts) {
      b.segments.push_back(PartSegment(gpus[index], index, part.field, part.label, part.css,
                                       Unreached(p, part.stage)));
    }
    bars.push_back(std::move(b));
  }
  const Json& g0 = gpus[0];
  std::vector<Rule> rules = {
      {"gpus.0.budget_bytes", U64(g0, "budget_bytes"), "line-budget", "budget"},
      {"gpus.0.total_bytes", U64(g0, "total_bytes"), "line-total", "total"}};
  report::html::BarChartOptions o;
  o.aria = "memory per GPU by stage, against the engine's budget and the GPU's total";
  std::string out = report::html::StackedBars(bars, rules, o);
  if (p.gpu_count > 1 && n < static_cast<size_t>(p.gpu_count)) {
    out += fmt::format(
        "<p class=\"note\">The {} GPUs hold alike shares (the plan's gpus[] has {} entr{}); "
        "each bar draws gpus[{}]{}.</p>\n",
        p.gpu_count, n, n == 1 ? "y" : "ies", n == 1 ? "0" : "i",
        p.gpu_count > kMaxBars ? fmt::format(" (the first {} are drawn)", kMaxBars) : "");
  }
  return out;
}

// The start-up as steps: after each of the plan's stages, what is held (cumulative); the load
// step shows the load peak (weights and the transient of loading them).
std::string PlanSteps(const Plan& p, const Json& gpus) {
  const Json& g0 = gpus[0];
  std::vector<Bar> bars;
  for (const StageLine& line : p.stages) {
    Bar b;
    b.label = StageName(line.stage);
    const bool unreached = Unreached(p, line.stage);
    for (const Part& part : kParts) {
      if (static_cast<int>(part.stage) > static_cast<int>(line.stage)) continue;
      const bool peak = line.stage == Stage::kLoad && part.stage == Stage::kLoad;
      b.segments.push_back(peak ? PartSegment(g0, 0, "load_peak", "load peak", part.css, unreached)
                                : PartSegment(g0, 0, part.field, part.label, part.css, unreached));
    }
    bars.push_back(std::move(b));
  }
  std::vector<Rule> rules = {
      {"gpus.0.budget_bytes", U64(g0, "budget_bytes"), "line-budget", "budget"},
      {"gpus.0.total_bytes", U64(g0, "total_bytes"), "line-total", "total"}};
  report::html::BarChartOptions o;
  o.bar_width = 90;
  o.gap = 0;
  o.plot_height = 200;
  o.aria = "memory held after each start-up stage on GPU 0";
  return report::html::StackedBars(bars, rules, o);
}

std::string PlanLegend() {
  std::vector<std::pair<std::string, std::string>> items;
  for (const Part& part : kParts) items.emplace_back(part.css, part.label);
  return report::html::Legend(items);
}

std::string StageTable(const Plan& p) {
  size_t failed = p.stages.size();
  for (size_t i = 0; i < p.stages.size(); ++i) {
    if (p.failure_stage == p.stages[i].stage) {
      failed = i;
      break;
    }
  }
  std::string out = "<table class=\"stages\"><tr><th>stage</th><th>what it holds</th>"
                    "<th>result</th></tr>\n";
  for (size_t i = 0; i < p.stages.size(); ++i) {
    out += fmt::format("<tr data-stage=\"{}\"><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                       StageName(p.stages[i].stage), StageName(p.stages[i].stage),
                       Esc(p.stages[i].detail),
                       i < failed ? "ok" : i == failed ? "<strong>FAILS</strong>" : "not reached");
  }
  return out + "</table>\n";
}

std::string ExplainTable(const Json& gpu) {
  const Json& explain = At(gpu, "explain");
  if (!explain.is_object() || explain.empty()) return "";
  std::string out =
      "<h2>Formulas</h2>\n<table class=\"explain\"><tr><th>figure</th><th class=\"num\">per "
      "GPU</th><th>formula and inputs</th></tr>\n";
  for (const auto& [name, e] : explain.items()) {
    out += fmt::format(
        "<tr id=\"explain-{}\"><td>{}</td><td class=\"num\" data-bytes=\"{}\">{}</td>"
        "<td>{}</td></tr>\n",
        Esc(name), Esc(name), U64(e, "bytes"), FormatBytes(U64(e, "bytes")),
        Esc(Str(e, "formula")));
  }
  return out + "</table>\n";
}

std::string AdviceTable(const Json& advice, bool fits) {
  if (!advice.is_array() || advice.empty()) {
    return fits ? ""
                : "<h2>What fits</h2>\n<p>Nothing tried fits on this GPU; see <code>vramfit "
                  "gpus</code> for other cards.</p>\n";
  }
  std::string out = "<h2>What fits</h2>\n<table class=\"advice\"><tr><th>change</th>"
                    "<th>effect</th><th>cost</th></tr>\n";
  for (const Json& a : advice) {
    out += fmt::format(
        "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>\n<tr class=\"command\"><td "
        "colspan=\"3\"><pre>{}</pre></td></tr>\n",
        Esc(Str(a, "change")), Esc(Str(a, "effect")), Esc(Str(a, "cost")),
        Esc(Str(a, "command")));
  }
  return out + "</table>\n";
}

std::string NotesList(const Json& notes) {
  if (!notes.is_array() || notes.empty()) return "";
  std::string out = "<h2>Notes</h2>\n<ul class=\"notes\">\n";
  for (const Json& n : notes) {
    if (n.is_string()) out += fmt::format("<li>{}</li>\n", Esc(n.get<std::string>()));
  }
  return out + "</ul>\n";
}

}  // namespace

std::string RenderPlanHtml(const Plan& p, const std::vector<Advice>& advice) {
  PlanReportOptions json_options;
  json_options.explain = true;
  const std::string json = RenderPlanJson(p, advice, json_options);
  const Json j = Parse(json);
  const Json& gpus = At(j, "gpus");
  if (!gpus.is_array() || gpus.empty()) return BrokenPage("plan", json);
  const std::string title =
      fmt::format("{} {} on {} x {}", p.engine_title, p.modelled_version, p.gpu_count, p.gpu.name);
  std::string body;
  body += fmt::format("<header><h1>{}</h1>\n<pre class=\"command\">{}</pre>\n", Esc(title),
                      Esc(p.command));
  body += fmt::format(
      "<p class=\"meta\">{} {} rules; {} x {} ({} as CUDA reports it); budget {} = {:.2f} x "
      "total</p>\n",
      Esc(p.engine_title), Esc(p.modelled_version), p.gpu_count, Esc(p.gpu.name),
      FormatBytes(p.gpu.total_bytes), FormatBytes(U64(gpus[0], "budget_bytes")),
      p.resolved.gpu_memory_utilization);
  if (p.fits) {
    body += fmt::format(
        "<p class=\"verdict fits\">Fits. KV cache {} tokens; {:.2f} requests of {} tokens at "
        "once{}.</p>\n",
        core::GroupDigits(p.kv_cache_tokens), p.max_concurrency,
        core::GroupDigits(static_cast<uint64_t>(std::max<int64_t>(0, p.max_model_len))),
        p.low_confidence() ? " (low confidence: the headroom is inside the plan's measured error)"
                           : "");
  } else {
    body += fmt::format("<p class=\"verdict fails\">Fails at {}: {}</p>\n",
                        p.failure_stage ? StageName(*p.failure_stage) : "?",
                        Esc(p.failure_message));
  }
  body += "</header>\n<h2>Memory per GPU</h2>\n";
  body += PlanLegend();
  body += PlanBars(p, gpus);
  body += "<h2>Start-up, step by step (GPU 0)</h2>\n";
  body += PlanSteps(p, gpus);
  body += StageTable(p);
  body += ExplainTable(gpus[0]);
  body += AdviceTable(At(j, "advice"), p.fits);
  body += NotesList(At(j, "notes"));
  return report::html::Page("plan", title, json, body);
}

// ---- fit ----

namespace {

// Context (log2 scale) against concurrency (linear from 0): one point per option, joined in
// context order, the chosen option (the first) marked; the nearest plan when the goal is unmet.
std::string FitCurve(const Json& options, const Json& nearest) {
  struct Point {
    std::string key;
    double context, concurrency;
    std::string css, label;
  };
  std::vector<Point> points;
  for (size_t i = 0; i < options.size(); ++i) {
    points.push_back({fmt::format("options.{}", i), Dbl(options[i], "max_model_len"),
                      Dbl(options[i], "max_concurrency"), i == 0 ? "point chosen" : "point",
                      Str(options[i], "command")});
  }
  if (nearest.is_object()) {
    points.push_back({"nearest", Dbl(nearest, "max_model_len"), Dbl(nearest, "max_concurrency"),
                      "point nearest", Str(nearest, "command")});
  }
  if (points.empty()) return "";
  constexpr double kLeft = 64, kTop = 16, kW = 560, kH = 240, kBottom = 40, kRight = 24;
  double lo = 1e300, hi = 0, ymax = 0;
  for (const Point& pt : points) {
    const double c = std::max(pt.context, 1.0);
    lo = std::min(lo, std::log2(c));
    hi = std::max(hi, std::log2(c));
    ymax = std::max(ymax, pt.concurrency);
  }
  lo = std::floor(lo) - 1;
  hi = std::ceil(hi) + 1;
  ymax = ymax > 0 ? ymax * 1.15 : 1;
  const double units_per_log2 = kW / (hi - lo);
  const double concurrency_per_unit = ymax / kH;
  auto x_of = [&](double c) { return kLeft + (std::log2(std::max(c, 1.0)) - lo) * units_per_log2; };
  auto y_of = [&](double q) { return kTop + kH - q / concurrency_per_unit; };
  const double width = kLeft + kW + kRight, height = kTop + kH + kBottom;
  std::string out = fmt::format(
      "<svg class=\"chart fit-curve\" role=\"img\" aria-label=\"context against concurrency of "
      "each option\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" data-x0=\"{}\" "
      "data-log2-min=\"{}\" data-units-per-log2=\"{}\" data-y0=\"{}\" "
      "data-concurrency-per-unit=\"{:.9f}\">\n",
      Num(width), Num(height), Num(width), Num(height), Num(kLeft), Num(lo), Num(units_per_log2),
      Num(kTop + kH), concurrency_per_unit);
  out += fmt::format("<line class=\"axis\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>"
                     "<line class=\"axis\" x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\"/>\n",
                     Num(kLeft), Num(kTop + kH), Num(kLeft + kW), Num(kTop));
  for (double e = lo; e <= hi; e += 1) {
    const double tokens = std::exp2(e);
    const std::string label = tokens >= 1024 ? fmt::format("{:.0f}K", tokens / 1024)
                                             : fmt::format("{:.0f}", tokens);
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                       Num(x_of(tokens)), Num(kTop + kH + 16), label);
  }
  for (double f : {0.0, 0.5, 1.0}) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{:.2f}</text>", Num(kLeft - 8),
                       Num(y_of(f * ymax) + 4), f * ymax);
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">context (tokens, log "
                     "scale) against requests at once</text>\n",
                     Num(kLeft + kW / 2), Num(kTop + kH + 34));
  std::vector<const Point*> sorted;
  for (const Point& pt : points) {
    if (pt.key != "nearest") sorted.push_back(&pt);
  }
  std::sort(sorted.begin(), sorted.end(),
            [](const Point* a, const Point* b) { return a->context < b->context; });
  if (sorted.size() > 1) {
    out += "<polyline class=\"curve\" points=\"";
    for (const Point* pt : sorted) {
      out += fmt::format("{},{} ", Num(x_of(pt->context)), Num(y_of(pt->concurrency)));
    }
    out += "\"/>\n";
  }
  for (const Point& pt : points) {
    out += fmt::format(
        "<circle class=\"{}\" cx=\"{}\" cy=\"{}\" r=\"{}\" data-key=\"{}\" data-context=\"{}\" "
        "data-concurrency=\"{}\"><title>{} tokens, {:.2f} at once: {}</title></circle>\n",
        pt.css, Num(x_of(pt.context)), Num(y_of(pt.concurrency)), pt.key == "options.0" ? 7 : 5,
        pt.key, fmt::format("{:.0f}", pt.context), fmt::format("{}", pt.concurrency),
        core::GroupDigits(static_cast<uint64_t>(pt.context)), pt.concurrency, Esc(pt.label));
  }
  return out + "</svg>\n";
}

std::string FitRow(const Json& o, const std::string& key, bool chosen) {
  std::string given;
  for (const Json& g : At(o, "given_up")) {
    if (g.is_string()) given += (given.empty() ? "" : "; ") + g.get<std::string>();
  }
  return fmt::format(
      "<tr data-key=\"{}\"{}><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{:.2f}</td>"
      "<td class=\"num\">{}</td><td>{}</td><td>{}</td></tr>\n<tr><td colspan=\"6\"><pre>{}</pre>"
      "</td></tr>\n",
      key, chosen ? " class=\"chosen\"" : "", Esc(Str(o, "model")),
      core::GroupDigits(U64(o, "max_model_len")), Dbl(o, "max_concurrency"), U64(o, "gpus"),
      Esc(Str(At(o, "gpu"), "name")), Esc(given), Esc(Str(o, "command")));
}

}  // namespace

std::string RenderFitHtml(const FitResult& r, const FitReportOptions& options) {
  const std::string json = RenderFitJson(r, options);
  const Json j = Parse(json);
  if (!j.is_object()) return BrokenPage("fit", json);
  const Json& opts = At(j, "options");
  const Json& best = At(j, "best");
  const std::string model = best.is_object() ? Str(best, "model")
                            : r.nearest         ? r.nearest->model
                                                : std::string("model");
  const std::string title = fmt::format("{}: {} settings that fit", model, r.engine_title);
  std::string body = fmt::format("<header><h1>{}</h1>\n", Esc(title));
  body += fmt::format("<p class=\"meta\">goal {}; {} plans evaluated</p>\n",
                      Esc(Str(j, "goal")), U64(j, "plans_evaluated"));
  if (r.met && best.is_object()) {
    body += fmt::format("<p class=\"verdict fits\">Chosen: {} tokens, {:.2f} requests at once "
                        "on {} x {}.</p>\n<pre class=\"command\">{}</pre>\n",
                        core::GroupDigits(U64(best, "max_model_len")),
                        Dbl(best, "max_concurrency"), U64(best, "gpus"),
                        Esc(Str(At(best, "gpu"), "name")), Esc(Str(best, "command")));
  } else {
    body += fmt::format("<p class=\"verdict fails\">Goal not met: {}</p>\n", Esc(r.unmet));
  }
  body += "</header>\n<h2>Context against concurrency</h2>\n";
  body += report::html::Legend({{"point chosen", "chosen"}, {"point", "other options"},
                                {"point nearest", "nearest (goal unmet)"}});
  body += FitCurve(opts.is_array() ? opts : Json::array(), At(j, "nearest"));
  body += "<h2>Options</h2>\n<table class=\"options\"><tr><th>model</th><th class=\"num\">"
          "context</th><th class=\"num\">at once</th><th class=\"num\">GPUs</th><th>GPU</th>"
          "<th>given up</th></tr>\n";
  for (size_t i = 0; opts.is_array() && i < opts.size(); ++i) {
    body += FitRow(opts[i], fmt::format("options.{}", i), i == 0);
  }
  if (At(j, "nearest").is_object()) body += FitRow(At(j, "nearest"), "nearest", false);
  body += "</table>\n";
  return report::html::Page("fit", title, json, body);
}

// ---- inspect ----

namespace {

std::string BytesBars(const Json& by, const char* prefix, const char* css, const char* aria) {
  if (!by.is_object()) return "";
  std::vector<Segment> rows;
  for (const auto& [name, v] : by.items()) {
    Segment s;
    s.key = fmt::format("{}.{}.bytes", prefix, name);
    s.bytes = U64(v, "bytes");
    s.css = css;
    s.label = name;
    s.hover = fmt::format("{} tensors", U64(v, "tensors"));
    rows.push_back(std::move(s));
  }
  return report::html::HorizontalBars(rows, aria);
}

}  // namespace

std::string RenderInspectHtml(const Inventory& inv) {
  const std::string json = RenderInspectJson(inv, {});
  const Json j = Parse(json);
  if (!j.is_object()) return BrokenPage("inspect", json);
  const std::string model = Str(j, "model");
  std::string body = fmt::format("<header><h1>{}</h1>\n", Esc(model));
  const Json& spec = At(j, "spec");
  body += fmt::format(
      "<p class=\"meta\">{}{}; {} parameters; {} in {} tensors{}</p>\n</header>\n",
      Esc(Str(spec, "architecture")),
      spec.is_object() ? fmt::format(", {} layers", U64(spec, "num_layers")) : "",
      core::FormatCount(U64(j, "parameters")), FormatBytes(U64(j, "total_bytes")),
      core::GroupDigits(U64(j, "tensor_count")),
      At(j, "synthesized").is_boolean() && At(j, "synthesized").get<bool>()
          ? " (synthesized from config.json)"
          : "");
  body += "<h2>Bytes by component</h2>\n";
  body += BytesBars(At(j, "by_component"), "by_component", "seg-load", "bytes by component");
  body += "<h2>Bytes by dtype</h2>\n";
  body += BytesBars(At(j, "by_dtype"), "by_dtype", "seg-profile", "bytes by dtype");
  const Json& q = At(j, "quantization");
  if (q.is_object() && !Str(q, "method").empty()) {
    body += fmt::format("<h2>Quantization</h2>\n<p>{}, {} bits, group size {}{}</p>\n",
                        Esc(Str(q, "method")), U64(q, "bits"), U64(q, "group_size"),
                        Dbl(q, "effective_bits") > 0
                            ? fmt::format("; {:.3f} effective bits", Dbl(q, "effective_bits"))
                            : "");
  }
  const Json& audit = At(j, "audit");
  if (audit.is_object()) {
    body += fmt::format("<h2>Audit</h2>\n<p>{} quantized and {} unquantized decoder projections."
                        "</p>\n",
                        U64(audit, "quantized_linear"), U64(audit, "unquantized_linear"));
    const Json& findings = At(audit, "findings");
    if (findings.is_array() && !findings.empty()) {
      body += "<table class=\"findings\"><tr><th>severity</th><th>code</th><th>finding</th>"
              "<th class=\"num\">bytes</th></tr>\n";
      for (const Json& f : findings) {
        body += fmt::format(
            "<tr class=\"finding-{}\"><td>{}</td><td>{}</td><td>{}</td><td class=\"num\">{}"
            "</td></tr>\n",
            Esc(Str(f, "severity")), Esc(Str(f, "severity")), Esc(Str(f, "code")),
            Esc(Str(f, "message")), U64(f, "bytes") ? FormatBytes(U64(f, "bytes")) : "");
      }
      body += "</table>\n";
    } else {
      body += "<p>No findings.</p>\n";
    }
  }
  body += NotesList(At(j, "notes"));
  return report::html::Page("inspect", model, json, body);
}

// ---- doctor ----

std::string RenderDoctorHtml(const Diagnosis& d, const LogScan& scan) {
  const std::string json = RenderDoctorJson(d, scan);
  const Json j = Parse(json);
  if (!j.is_object()) return BrokenPage("doctor", json);
  const std::string title =
      d.found              ? fmt::format("{} at {}", d.cause, d.stage)
      : !d.engine.empty() ? fmt::format("no failure recognised ({})", d.engine)
                          : std::string("nothing recognised");
  std::string body = fmt::format("<header><h1>{}</h1>\n", Esc(title));
  if (d.found) {
    body += fmt::format("<p class=\"verdict fails\">{}</p>\n<p class=\"meta\">stage decided by "
                        "{}</p>\n",
                        Esc(d.summary), Esc(d.stage_evidence));
  } else {
    body += "<p class=\"verdict\">No rule recognised this log.</p>\n";
  }
  body += "</header>\n";
  // The log's memory figures, each beside the plan's where the plan has one (plan_<key>).
  const Json& numbers = At(j, "numbers");
  std::vector<Segment> rows;
  for (const auto& [key, v] : numbers.items()) {
    const bool bytes = key.size() > 6 && key.compare(key.size() - 6, 6, "_bytes") == 0;
    if (!bytes || key.rfind("plan_", 0) == 0) continue;
    rows.push_back({"numbers." + key, U64(v), "seg-log", "log " + key, "", "", false});
    const std::string plan_key = "plan_" + key;
    const Json& pv = At(numbers, plan_key.c_str());
    if (pv.is_number()) {
      rows.push_back({"numbers." + plan_key, U64(pv), "seg-plan", "plan " + key, "", "", false});
    }
  }
  if (!rows.empty()) {
    body += "<h2>Memory: the log's numbers and the plan's</h2>\n";
    body += report::html::Legend({{"seg-log", "from the log"}, {"seg-plan", "the plan"}});
    body += report::html::HorizontalBars(rows, "the log's memory figures against the plan's");
  }
  if (numbers.is_object() && !numbers.empty()) {
    body += "<h2>Numbers</h2>\n<table class=\"numbers\">\n";
    for (const auto& [key, v] : numbers.items()) {
      body += fmt::format("<tr><td>{}</td><td class=\"num\">{}</td></tr>\n", Esc(key),
                          Esc(v.dump()));
    }
    body += "</table>\n";
  }
  if (!d.fixes.empty()) {
    body += "<h2>Fixes</h2>\n<table class=\"fixes\">\n";
    for (const Fix& f : d.fixes) {
      body += fmt::format("<tr><td><code>{}</code></td><td>{}</td></tr>\n", Esc(f.change),
                          Esc(f.effect));
    }
    body += "</table>\n";
  }
  if (!d.evidence.empty()) {
    body += "<h2>Evidence</h2>\n<pre class=\"evidence\">";
    for (const std::string& e : d.evidence) body += Esc(e) + "\n";
    body += "</pre>\n";
  }
  if (!scan.unplaced.empty()) {
    body += "<h2>Error lines no rule placed</h2>\n<pre class=\"unplaced\">";
    for (const std::string& e : scan.unplaced) body += Esc(e) + "\n";
    body += "</pre>\n";
  }
  body += NotesList(At(j, "notes"));
  body += fmt::format("<p class=\"meta\">log: {} lines, {} bytes</p>\n", scan.lines, scan.bytes);
  return report::html::Page("doctor", title, json, body);
}

}  // namespace vramfit
