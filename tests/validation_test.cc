// Scores the vLLM planner against the published measurements in validation/vllm/records/ and
// writes the table to docs/validation.md (the test fails when the committed table is stale;
// VRAMFIT_UPDATE_GOLDEN=1 rewrites it). Two scores per record where the source allows:
// end to end (the planner's own budget) and KV formula only (the reported available KV memory
// fed to the KV layout), which isolates the page/grouping/concurrency rules.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "vramfit/catalog.h"
#include "vramfit/gpu.h"
#include "vramfit/kv_cache.h"
#include "vramfit/vllm.h"

namespace vramfit {
namespace {

namespace fs = std::filesystem;

std::optional<double> Num(simdjson::dom::element e, const char* key) {
  double d = 0;
  int64_t i = 0;
  if (!e[key].get_double().get(d)) return d;
  if (!e[key].get_int64().get(i)) return static_cast<double>(i);
  return std::nullopt;
}

std::string Str(simdjson::dom::element e, const char* key) {
  std::string_view s;
  return e[key].get_string().get(s) ? std::string() : std::string(s);
}

Result<GpuSpec> GpuFromText(std::string text) {
  // "RTX 3090 (from issue title ...)" -> "RTX 3090"; "NVIDIA A100 80GB" etc.
  const size_t paren = text.find('(');
  if (paren != std::string::npos) text = text.substr(0, paren);
  while (!text.empty() && text.back() == ' ') text.pop_back();
  auto g = FindGpu(text);
  if (g.ok()) return g;
  // Try dropping trailing words ("24GB", "HBM3").
  while (text.find(' ') != std::string::npos) {
    text = text.substr(0, text.rfind(' '));
    g = FindGpu(text);
    if (g.ok()) return g;
  }
  return Status::NotFound("GPU not in the catalog");
}

std::string Pct(double predicted, double reported) {
  if (reported == 0) return "-";
  return fmt::format("{:+.1f}%", 100.0 * (predicted - reported) / reported);
}

TEST(Validation, ScoresEveryUsableRecordAndWritesTheTable) {
  const fs::path dir = fs::path(VRAMFIT_SOURCE_DIR) / "validation/vllm/records";
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 30u);

  std::string rows, skipped;
  int scored = 0, weights_n = 0, weights_ok = 0, kv_n = 0, kv_ok = 0, kvf_n = 0, kvf_ok = 0;
  simdjson::dom::parser parser;
  for (const fs::path& p : files) {
    simdjson::dom::element rec;
    ASSERT_EQ(parser.load(p.string()).get(rec), simdjson::SUCCESS) << p;
    const std::string id = Str(rec, "id");
    ASSERT_EQ(id + ".json", p.filename().string());
    ASSERT_FALSE(Str(rec, "source").empty()) << id;
    const std::string model = Str(rec, "model");
    auto entry = FindCatalogModel(model);
    if (!entry.ok()) { skipped += fmt::format("| {} | model {} not in the catalog |\n", id, model); continue; }
    auto gpu = GpuFromText(Str(rec, "gpu"));
    if (!gpu.ok()) { skipped += fmt::format("| {} | GPU \"{}\" not in the catalog |\n", id, Str(rec, "gpu")); continue; }
    simdjson::dom::element set = rec["settings"], rep = rec["reported"];
    VllmSettings s;
    const std::string version = Str(rec, "vllm_version");
    if (!version.empty() && ParseVllmVersion(version).ok()) s.version = version.substr(0, version.find_first_not_of("0123456789."));
    if (auto v = Num(set, "tensor_parallel_size")) s.tensor_parallel_size = static_cast<int64_t>(*v);
    else if (auto c = Num(rec, "gpu_count")) s.tensor_parallel_size = static_cast<int64_t>(*c);
    if (auto v = Num(set, "pipeline_parallel_size")) s.pipeline_parallel_size = static_cast<int64_t>(*v);
    if (auto v = Num(set, "max_model_len")) s.max_model_len = static_cast<int64_t>(*v);
    if (auto v = Num(set, "gpu_memory_utilization")) s.gpu_memory_utilization = *v;
    if (auto v = Num(set, "max_num_seqs")) s.max_num_seqs = static_cast<int64_t>(*v);
    if (auto v = Num(set, "max_num_batched_tokens")) s.max_num_batched_tokens = static_cast<int64_t>(*v);
    if (!Str(set, "kv_cache_dtype").empty()) s.kv_cache_dtype = Str(set, "kv_cache_dtype");
    bool eager = false;
    if (!set["enforce_eager"].get_bool().get(eager)) s.enforce_eager = eager;
    s.allow_long_max_model_len = true;
    auto inv = InspectModel(entry->id, {});
    ASSERT_TRUE(inv.ok()) << id;
    auto plan = PlanVllm(*inv, *gpu, s);
    if (!plan.ok()) { skipped += fmt::format("| {} | {} |\n", id, plan.status().message()); continue; }
    ++scored;
    const VllmGpuPlan& g = plan->gpus[0];
    const double gib = 1073741824.0;
    std::string w_cell = "-", kv_cell = "-", kvf_cell = "-";
    if (auto rw = Num(rep, "model_loading_gib")) {
      const double pw = g.weights_bytes / gib;
      w_cell = fmt::format("{:.2f} / {:.2f} ({})", pw, *rw, Pct(pw, *rw));
      ++weights_n;
      weights_ok += std::abs(pw - *rw) <= 0.02 * *rw;
    }
    if (auto rt = Num(rep, "gpu_kv_cache_tokens"); rt && *rt > 0) {
      kv_cell = fmt::format("{} / {:.0f} ({})", plan->kv_cache_tokens, *rt, Pct(plan->kv_cache_tokens, *rt));
      ++kv_n;
      kv_ok += std::abs(plan->kv_cache_tokens - *rt) <= 0.05 * *rt;
      if (auto ra = Num(rep, "available_kv_cache_gib"); ra && *ra > 0) {
        KvCacheOptions ko;
        ko.tensor_parallel_size = plan->resolved.tensor_parallel_size;
        ko.pipeline_parallel_size = plan->resolved.pipeline_parallel_size;
        ko.kv_cache_dtype = plan->resolved.kv_cache_dtype;
        ko.max_model_len = plan->max_model_len;
        ko.max_num_batched_tokens = plan->resolved.max_num_batched_tokens;
        ko.vllm_version = *ParseVllmVersion(plan->modelled_version);
        auto layout = PlanKvCache(inv->spec, ko);
        if (layout.ok()) {
          const auto cap = KvCapacity(*layout, static_cast<uint64_t>(*ra * gib), ko);
          kvf_cell = fmt::format("{} ({})", cap.kv_cache_tokens, Pct(cap.kv_cache_tokens, *rt));
          ++kvf_n;
          kvf_ok += std::abs(cap.kv_cache_tokens - *rt) <= 0.05 * *rt;
        }
      }
    }
    rows += fmt::format("| {} | {} x {} | {} | {} | {} | {} |\n", id, s.tensor_parallel_size, gpu->id,
                        plan->modelled_version, w_cell, kv_cell, kvf_cell);
  }
  std::string doc = "# Validation: vLLM plans against published measurements\n\n";
  doc += "Written by `tests/validation_test.cc` from `validation/vllm/records/` (see its README). Weights: predicted "
         "per-GPU weights vs vLLM's \"Model loading took\" (GiB). KV tokens: predicted \"GPU KV cache size\" vs the "
         "reported one, end to end. KV formula: the reported available KV memory fed to the KV layout, which isolates "
         "the page, grouping and concurrency rules from the activation and non-torch estimates.\n\n";
  doc += fmt::format("Scored {} of {} records. Within 2% on weights: {}/{}. Within 5% on KV tokens end to end: {}/{}; "
                     "with the reported KV memory: {}/{}.\n\n", scored, files.size(), weights_ok, weights_n, kv_ok, kv_n,
                     kvf_ok, kvf_n);
  doc += "The activation-peak, non-torch and CUDA-graph constants are first estimates (docs/engines/vllm.md), not "
         "yet calibrated on this set; end-to-end KV errors mostly reflect them.\n\n";
  doc += "| record | GPUs | rules | weights GiB predicted / reported | KV tokens predicted / reported | KV formula only |\n"
         "|---|---|---|---|---|---|\n" + rows;
  doc += "\n## Records not scored\n\n| record | why |\n|---|---|\n" + skipped;
  const fs::path out = fs::path(VRAMFIT_SOURCE_DIR) / "docs/validation.md";
  if (std::getenv("VRAMFIT_UPDATE_GOLDEN") != nullptr) std::ofstream(out) << doc;
  std::ifstream in(out);
  std::stringstream committed;
  committed << in.rdbuf();
  EXPECT_EQ(committed.str(), doc) << "docs/validation.md is stale: rerun with VRAMFIT_UPDATE_GOLDEN=1";
  EXPECT_GT(scored, 0);
}

}  // namespace
}  // namespace vramfit
