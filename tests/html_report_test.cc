// The HTML reports (vramfit/report_html.h) of the reported scenarios and of hostile strings:
// every drawn bar's data-bytes is the JSON number its data-key names, and its length is that
// number over the chart's scale; the embedded JSON is the command's JSON; input text is escaped
// and nothing outside the file is referenced.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "vramfit/advice.h"
#include "vramfit/doctor.h"
#include "vramfit/engine.h"
#include "vramfit/fit.h"
#include "vramfit/gpu.h"
#include "vramfit/inspect.h"
#include "vramfit/report.h"
#include "vramfit/report_html.h"

namespace vramfit {
namespace {

using Json = nlohmann::json;

// The JSON block of a page, with ScriptJson's \u003c turned back into '<' (JSON reads both).
Json EmbeddedJson(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"vramfit-json\">\n";
  const size_t a = html.find(open);
  EXPECT_NE(a, std::string::npos);
  const size_t b = html.find("</script>", a);
  return Json::parse(html.substr(a + open.size(), b - a - open.size()));
}

const Json* Resolve(const Json& j, const std::string& key) {
  const Json* at = &j;
  size_t start = 0;
  while (start <= key.size()) {
    size_t dot = key.find('.', start);
    if (dot == std::string::npos) dot = key.size();
    const std::string part = key.substr(start, dot - start);
    if (at->is_array()) {
      const size_t i = std::stoul(part);
      if (i >= at->size()) return nullptr;
      at = &(*at)[i];
    } else if (at->is_object() && at->contains(part)) {
      at = &(*at)[part];
    } else {
      return nullptr;
    }
    start = dot + 1;
  }
  return at;
}

std::string Attr(const std::string& tag, const std::string& name) {
  const std::regex re(" " + name + "=\"([^\"]*)\"");
  std::smatch m;
  return std::regex_search(tag, m, re) ? m[1].str() : std::string();
}

// Checks every <rect data-key> of every chart; returns how many bars were checked.
int CheckBars(const std::string& html) {
  const Json j = EmbeddedJson(html);
  int checked = 0;
  size_t pos = 0;
  while ((pos = html.find("<svg class=\"chart", pos)) != std::string::npos) {
    const size_t end = html.find("</svg>", pos);
    const std::string svg = html.substr(pos, end - pos);
    const std::string head = svg.substr(0, svg.find('>'));
    const std::string per_unit = Attr(head, "data-bytes-per-unit");
    const bool horizontal = head.find("hbars") != std::string::npos;
    const std::regex rect("<rect [^>]*data-key=\"[^\"]*\"[^>]*>");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), rect);
         it != std::sregex_iterator(); ++it) {
      const std::string tag = it->str();
      const std::string key = Attr(tag, "data-key");
      const Json* v = Resolve(j, key);
      EXPECT_NE(v, nullptr) << key;
      if (v == nullptr) continue;
      const double bytes = std::stod(Attr(tag, "data-bytes"));
      EXPECT_EQ(bytes, std::floor(v->get<double>())) << key;
      const double length = std::stod(Attr(tag, horizontal ? "width" : "height"));
      EXPECT_NEAR(length, bytes / std::stod(per_unit), 0.01) << key;
      ++checked;
    }
    pos = end;
  }
  return checked;
}

// Nothing the page would fetch: no src/href attributes, no stylesheet links, no CSS urls.
void ExpectSelfContained(const std::string& html) {
  EXPECT_EQ(html.find(" src="), std::string::npos);
  EXPECT_EQ(html.find(" href="), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_NE(html.find("prefers-color-scheme: dark"), std::string::npos);
  EXPECT_NE(html.find("@media print"), std::string::npos);
}

struct Planned {
  Inventory inv;
  Plan plan;
  std::vector<Advice> advice;
};

// Plans a command line as `vramfit check --gpu GPU -- ARGV` does.
Planned PlanCommand(const std::vector<std::string>& argv, const std::string& gpu_name) {
  Planned out;
  const Engine* engine = EngineForCommand(argv);
  EXPECT_NE(engine, nullptr);
  auto cmd = engine->read_command(argv);
  EXPECT_TRUE(cmd.ok()) << cmd.status().message();
  auto settings = engine->read_flags(cmd->flags, cmd->settings);
  EXPECT_TRUE(settings.ok()) << settings.status().message();
  auto gpu = FindGpu(gpu_name);
  EXPECT_TRUE(gpu.ok());
  auto inv = InspectModel(cmd->model, {});
  EXPECT_TRUE(inv.ok()) << inv.status().message();
  out.inv = std::move(*inv);
  auto model = engine->prepare(out.inv);
  EXPECT_TRUE(model.ok());
  auto plan = (*model)->MakePlan(*gpu, *settings);
  EXPECT_TRUE(plan.ok());
  out.plan = std::move(*plan);
  out.advice = Advise(*engine, **model, *gpu, *settings, out.plan);
  return out;
}

std::string EngineName() { return std::string(Engines()[0]->name); }

TEST(HtmlReport, Qwen3_4bAwqAt256kOn4090FailsAtKvCacheAndAgreesWithJson) {
  const Planned p = PlanCommand({EngineName(), "serve", "qwen3-4b-instruct-2507-awq",
                                 "--max-model-len", "262144"},
                                "4090");
  ASSERT_FALSE(p.plan.fits);
  const std::string html = RenderPlanHtml(p.plan, p.advice);
  EXPECT_EQ(EmbeddedJson(html), Json::parse(RenderPlanJson(p.plan, p.advice, {true})));
  // 6 parts on 1 GPU, and the steps 1 + 2 + 4 + 5 + 6.
  EXPECT_EQ(CheckBars(html), 6 + 18);
  ExpectSelfContained(html);
  EXPECT_NE(html.find("Fails at kv_cache"), std::string::npos);
  EXPECT_NE(html.find("id=\"explain-kv_cache\""), std::string::npos);
  EXPECT_NE(html.find("data-explain=\"kv_cache\""), std::string::npos);
  EXPECT_LT(html.size(), 60000u);
}

TEST(HtmlReport, Qwen35_35bA3bAwqOnTwo4090sWithImagesDrawsBothGpus) {
  const Planned p = PlanCommand({EngineName(), "serve", "qwen3.5-35b-a3b-awq",
                                 "--tensor-parallel-size", "2", "--limit-mm-per-prompt",
                                 "{\"image\": 2}"},
                                "4090");
  ASSERT_TRUE(p.plan.fits);
  const std::string html = RenderPlanHtml(p.plan, p.advice);
  EXPECT_EQ(CheckBars(html), 2 * 6 + 18);
  EXPECT_NE(html.find("GPU 1"), std::string::npos);
  EXPECT_NE(html.find("id=\"explain-encoder\""), std::string::npos);  // the images' encoder
  EXPECT_NE(html.find("verdict fits"), std::string::npos);
}

TEST(HtmlReport, Qwen3_30bA3bBf16FailsAtLoadWithLaterStagesUnreached) {
  const Planned p = PlanCommand({EngineName(), "serve", "qwen3-30b-a3b"}, "4090");
  ASSERT_FALSE(p.plan.fits);
  ASSERT_EQ(p.plan.failure_stage, Stage::kLoad);
  const std::string html = RenderPlanHtml(p.plan, p.advice);
  EXPECT_EQ(CheckBars(html), 6 + 18);
  EXPECT_NE(html.find("seg seg-kv unreached"), std::string::npos);
  const std::string bars = html.substr(0, html.find("Start-up, step by step"));
  EXPECT_NE(bars.find("seg seg-kv unreached"), std::string::npos);
  EXPECT_EQ(bars.find("seg seg-load unreached"), std::string::npos);
  EXPECT_NE(html.find("Fails at load"), std::string::npos);
}

TEST(HtmlReport, HostileStringsAreEscapedInTextAndJson) {
  Plan p;
  p.engine = "x";
  p.engine_title = "<script>alert(1)</script>";
  p.command = "serve \"</script><img src=x onerror=alert(1)>\" & more";
  p.gpu.name = "<b>card</b>";
  p.gpu_count = 1;
  p.gpus.push_back({});
  p.gpus[0].total_bytes = 1000;
  p.gpus[0].weights_bytes = 2000;
  p.gpus[0].explain.push_back({"weights", 2000, "a < b && c > d \x01"});
  p.failure_stage = Stage::kLoad;
  p.failure_message = "it's <bad>";
  p.stages = {{Stage::kStartup, "ctx"}, {Stage::kLoad, "<w>"}};
  const std::string html = RenderPlanHtml(p, {});
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_EQ(html.find("<img"), std::string::npos);
  EXPECT_EQ(html.find("<b>card"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("\\u003c/script>\\u003cimg"), std::string::npos);
  EXPECT_NE(html.find("a &lt; b &amp;&amp; c &gt; d \\x01"), std::string::npos);
  EXPECT_EQ(EmbeddedJson(html)["command"], p.command);
  EXPECT_EQ(CheckBars(html), 6 + 1 + 2);  // the bars taller than the total still scale
}

TEST(HtmlReport, FitCurvePlacesEachOptionAtItsContextAndConcurrency) {
  const Engine& engine = *Engines()[0];
  auto inv = InspectModel("qwen3-4b-instruct-2507-awq", {});
  ASSERT_TRUE(inv.ok());
  FitRequest req;
  req.cards.push_back(*FindGpu("4090"));
  auto r = Fit(engine, {{"qwen3-4b-instruct-2507-awq", &*inv}}, req);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->met);
  const std::string html = RenderFitHtml(*r, {});
  const Json j = EmbeddedJson(html);
  EXPECT_EQ(j, Json::parse(RenderFitJson(*r, {})));
  ExpectSelfContained(html);
  const size_t svg = html.find("<svg class=\"chart fit-curve\"");
  ASSERT_NE(svg, std::string::npos);
  const std::string head = html.substr(svg, html.find('>', svg) - svg);
  const double x0 = std::stod(Attr(head, "data-x0")), lo = std::stod(Attr(head, "data-log2-min"));
  const double upl = std::stod(Attr(head, "data-units-per-log2"));
  const double y0 = std::stod(Attr(head, "data-y0"));
  const double cpu = std::stod(Attr(head, "data-concurrency-per-unit"));
  const std::regex circle("<circle [^>]*>");
  int points = 0;
  for (auto it = std::sregex_iterator(html.begin(), html.end(), circle);
       it != std::sregex_iterator(); ++it) {
    const std::string tag = it->str();
    const Json* o = Resolve(j, Attr(tag, "data-key"));
    ASSERT_NE(o, nullptr);
    const double ctx = (*o)["max_model_len"].get<double>();
    const double q = (*o)["max_concurrency"].get<double>();
    EXPECT_NEAR(std::stod(Attr(tag, "cx")), x0 + (std::log2(ctx) - lo) * upl, 0.01);
    EXPECT_NEAR(std::stod(Attr(tag, "cy")), y0 - q / cpu, 0.01);
    ++points;
  }
  EXPECT_EQ(points, static_cast<int>(j["options"].size()));
  EXPECT_NE(html.find("point chosen"), std::string::npos);
}

TEST(HtmlReport, InspectDrawsBytesByComponentAndDtypeAndFindings) {
  auto inv = InspectModel("qwen3-30b-a3b-gptq-int4", {});
  ASSERT_TRUE(inv.ok());
  const std::string html = RenderInspectHtml(*inv);
  const Json j = EmbeddedJson(html);
  EXPECT_EQ(CheckBars(html),
            static_cast<int>(j["by_component"].size() + j["by_dtype"].size()));
  EXPECT_NE(html.find("group-overhead"), std::string::npos);
  ExpectSelfContained(html);
}

TEST(HtmlReport, DoctorDrawsTheLogsNumbersBesideThePlans) {
  std::ifstream file(std::string(VRAMFIT_SOURCE_DIR) +
                     "/tests/doctor/corpus/vllm-kv-max-seq-len-29000-llama3.1-8b-3090-10517.log");
  std::string text((std::istreambuf_iterator<char>(file)), {});
  const size_t at = text.find("Try increasing");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "<script>x</script> ");
  std::istringstream log(text);
  auto scan = ScanLog(log);
  ASSERT_TRUE(scan.ok());
  auto inv = InspectModel("llama-3.1-8b-instruct", {});
  ASSERT_TRUE(inv.ok());
  DoctorContext ctx;
  ctx.model = &*inv;
  ctx.gpu = *FindGpu("3090");
  const Diagnosis d = Diagnose(*scan, ctx);
  ASSERT_TRUE(d.found);
  const std::string html = RenderDoctorHtml(d, *scan);
  EXPECT_GE(CheckBars(html), 4);
  EXPECT_NE(html.find("data-key=\"numbers.plan_weights_bytes\""), std::string::npos);
  EXPECT_EQ(html.find("<script>x"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;x&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(EmbeddedJson(html), Json::parse(RenderDoctorJson(d, *scan)));
  ExpectSelfContained(html);
}

// A log whose engine lines were read but hold no failure is titled as such, not as a log the
// doctor could not read.
TEST(HtmlReport, DoctorPageOfAHealthyLogSaysNoFailure) {
  std::istringstream log(
      "INFO 01-15 10:23:58 [gpu_worker.py:333] Available KV cache memory: 51.53 GiB\n"
      "INFO 01-15 10:24:22 [api_server.py:1880] Starting vLLM API server 0 on "
      "http://0.0.0.0:8000\n"
      "INFO:     Application startup complete.\n");
  auto scan = ScanLog(log);
  ASSERT_TRUE(scan.ok());
  const Diagnosis d = Diagnose(*scan);
  ASSERT_FALSE(d.found);
  const std::string html = RenderDoctorHtml(d, *scan);
  EXPECT_NE(html.find("<h1>no failure recognised (vllm)</h1>"), std::string::npos);
  ExpectSelfContained(html);
}

}  // namespace
}  // namespace vramfit
