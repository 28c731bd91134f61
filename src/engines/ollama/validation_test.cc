// Scores Ollama's layer-offload decision, as the plan models it (EstimateGpuLayers, GraphSize),
// against published `msg=offload` log lines (validation/ollama/records.json), and writes
// docs/validation-ollama.md (the test fails when the committed page is stale;
// VRAMFIT_UPDATE_GOLDEN=1 rewrites it). A log line prints the estimate's inputs in total
// (repeating weights, KV, graph, free memory per GPU), so each record's model is rebuilt as
// equal layers of those totals and placed; the decision (layers offloaded, split) must match
// exactly, the allocations within 3% or 100 MiB. Where the model is identified, its KV and graph
// sizes are recomputed from its hyperparameters too. Even issue numbers are the development
// half, odd ones the test half; a floor per half keeps a regression from passing.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "engines/ollama/ollama.h"
#include "testutil/json_fields.h"

namespace vramfit::ollama {
namespace {

namespace fs = std::filesystem;
using simdjson::dom::element;

// Decisions matched today, per half: raise when the model improves, never lower.
constexpr int kFloorDev = 1;
constexpr int kFloorTest = 1;

using testutil::Int;
using testutil::Str;
// "22.0 GiB", "640.0 MiB", "0 B" (format.HumanBytes2) -> bytes.
uint64_t Bytes(const std::string& s) {
  double v = 0;
  char unit[8] = {};
  if (std::sscanf(s.c_str(), "%lf %7s", &v, unit) < 1) return 0;
  const std::string u(unit);
  const double scale = u == "GiB" ? 1073741824.0 : u == "MiB" ? 1048576.0 : u == "KiB" ? 1024.0
                                                                                         : 1.0;
  return static_cast<uint64_t>(v * scale);
}
std::vector<std::string> Strs(element e, const char* key) {
  std::vector<std::string> out;
  simdjson::dom::array a;
  if (e[key].get_array().get(a)) return out;
  for (element x : a) {
    std::string_view s;
    if (!x.get_string().get(s)) out.emplace_back(s);
  }
  return out;
}
std::vector<int64_t> Ints(element e, const char* key) {
  std::vector<int64_t> out;
  simdjson::dom::array a;
  if (e[key].get_array().get(a)) return out;
  for (element x : a) {
    int64_t v = 0;
    if (!x.get_int64().get(v)) out.push_back(v);
  }
  return out;
}
double MiB(uint64_t b) { return static_cast<double>(b) / 1048576.0; }
bool Within(uint64_t logged, uint64_t planned) {
  const double err = std::fabs(MiB(planned) - MiB(logged));
  return err <= std::max(0.03 * MiB(logged), 100.0);
}
std::string Join(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s.empty() ? "-" : s;
}

TEST(OllamaValidation, OffloadDecisionsAgainstPublishedLogs) {
  const fs::path root(VRAMFIT_SOURCE_DIR);
  simdjson::dom::parser parser;
  element doc;
  ASSERT_EQ(parser.load((root / "validation/ollama/records.json").string()).get(doc),
            simdjson::SUCCESS);
  struct Half {
    int records = 0, matched = 0, alloc_rows = 0, alloc_within = 0;
  };
  std::map<std::string, Half> halves = {{"dev", {}}, {"test", {}}};
  int sizes = 0, sizes_within = 0;
  std::vector<std::string> unexplained;
  std::ostringstream decisions, recomputed;
  simdjson::dom::array records;
  ASSERT_EQ(doc["records"].get_array().get(records), simdjson::SUCCESS);
  for (element r : records) {
    const std::string id = Str(r, "id");
    const std::string half = Int(r, "issue") % 2 == 0 ? "dev" : "test";
    Half& hf = halves[half];
    ++hf.records;
    const int64_t blocks = Int(r, "layers_model") - 1;
    ASSERT_GT(blocks, 0) << id;
    // The model as the log gives it: equal layers of the totals, the output layer (plus an
    // Ollama-engine projector, placed with it) last.
    ModelFacts f;
    f.arch = "logged";
    const uint64_t repeating = Bytes(Str(r, "repeating"));
    const uint64_t kv = Bytes(Str(r, "kv"));
    // Before v0.6.5 the line's weights.repeating summed each layer with its KV.
    bool with_kv = false;
    if (r["repeating_includes_kv"].get_bool().get(with_kv)) with_kv = false;
    const uint64_t weights = with_kv && repeating > kv ? repeating - kv : repeating;
    f.layer_bytes.assign(static_cast<size_t>(blocks), weights / static_cast<uint64_t>(blocks));
    f.heads.assign(static_cast<size_t>(blocks), 1);
    f.heads_kv.assign(static_cast<size_t>(blocks), 1);
    f.output_bytes = Bytes(Str(r, "nonrepeating"));
    for (const std::string& p : Strs(r, "projector_last")) f.output_bytes += Bytes(p);
    GraphSize g;
    g.kv.assign(static_cast<size_t>(blocks), kv / static_cast<uint64_t>(blocks));
    g.full = Bytes(Str(r, "graph_full"));
    g.partial = Bytes(Str(r, "graph_partial"));
    EstimateInput in;
    for (const std::string& a : Strs(r, "available")) in.free.push_back(Bytes(a));
    in.overhead = Bytes(Str(r, "gpu_overhead"));
    in.num_gpu = Int(r, "requested", -1);
    const MemoryEstimate e = EstimateGpuLayers(f, g, in);
    const std::vector<int64_t> split = Ints(r, "split");
    const int64_t offload = Int(r, "offload");
    const bool matched = e.layers == offload && (split.empty() || split == e.split);
    hf.matched += matched;
    const std::string note = Str(r, "scoring_note");
    if (!matched && note.empty()) unexplained.push_back(id);
    // Allocations per GPU, then memory.required.partial and .full.
    std::vector<std::string> logged_alloc = Strs(r, "allocations");
    std::string cells;
    int within = 0, rows = 0;
    auto score = [&](const std::string& name, uint64_t logged, uint64_t planned) {
      const bool ok = Within(logged, planned);
      ++rows;
      within += ok;
      cells += fmt::format("{}{} {:.0f}/{:.0f}{}", cells.empty() ? "" : ", ", name, MiB(logged),
                           MiB(planned), ok ? "" : " (out)");
    };
    for (size_t i = 0; i < logged_alloc.size() && i < e.allocations.size(); ++i) {
      score(fmt::format("GPU{}", i), Bytes(logged_alloc[i]), e.allocations[i]);
    }
    score("partial", Bytes(Str(r, "partial")), e.vram);
    score("full", Bytes(Str(r, "full")), e.total);
    hf.alloc_rows += rows;
    hf.alloc_within += within;
    decisions << fmt::format("| {} | {} | {} | {} / {} | {} / {} | {} | {} |\n", id, half,
                             Str(r, "era"), offload, e.layers, Join(split), Join(e.split),
                             matched ? "yes" : "no: " + note, cells);
    // KV and graph from the model's hyperparameters.
    element m;
    if (!r["model"].get(m)) {
      ModelFacts h;
      h.arch = Str(m, "arch");
      const size_t n = static_cast<size_t>(Int(m, "n_layer"));
      h.layer_bytes.assign(n, 0);
      h.heads.assign(n, static_cast<uint64_t>(Int(m, "n_head")));
      h.heads_kv.assign(n, static_cast<uint64_t>(Int(m, "n_head_kv")));
      h.embedding = static_cast<uint64_t>(Int(m, "n_embd"));
      h.vocab = static_cast<uint64_t>(Int(m, "n_vocab"));
      h.head_k = h.head_v = static_cast<uint64_t>(Int(m, "head_dim"));
      const uint64_t ctx = static_cast<uint64_t>(Int(m, "num_ctx"));
      const GraphSize c = EstimateGraph(h, ctx, std::min<uint64_t>(512, ctx),
                                        Int(m, "parallel", 1), "f16", false);
      uint64_t kv_total = 0;
      for (uint64_t k : c.kv) kv_total += k;
      const bool multi = Strs(r, "available").size() > 1;
      const uint64_t full = multi ? c.partial : c.full;
      const uint64_t logged[3] = {kv, g.full, g.partial};
      const uint64_t planned[3] = {kv_total, full, c.partial};
      const char* names[3] = {"kv", "graph full", "graph partial"};
      for (int i = 0; i < 3; ++i) {
        const bool ok = Within(logged[i], planned[i]);
        ++sizes;
        sizes_within += ok;
        recomputed << fmt::format("| {} | {} | {:.1f} | {:.1f} | {:+.1f} | {} |\n", id, names[i],
                                  MiB(logged[i]), MiB(planned[i]),
                                  MiB(planned[i]) - MiB(logged[i]), ok ? "yes" : "no");
      }
    }
  }
  std::ostringstream out;
  out << "# Validation: Ollama\n\n"
      << "Generated by `src/engines/ollama/validation_test.cc` from "
         "`validation/ollama/records.json` (`VRAMFIT_UPDATE_GOLDEN=1` rewrites it).\n"
      << "Each record is one published Ollama `msg=offload` log line: the inputs of its "
         "estimate (free memory per GPU, repeating and output weights, KV, graph, a vision "
         "projector) and its decision (`layers.offload`, `layers.split`, "
         "`memory.required.allocations`, `.partial`, `.full`). The model is rebuilt as equal "
         "layers of the logged totals and placed by the plan's `EstimateGpuLayers` (Ollama "
         "v0.12.10's llm/memory.go; the logs come from earlier releases whose placement rule is "
         "the same). The decision must match exactly; sizes are compared as logged/planned MiB "
         "within 3% or 100 MiB (the log rounds to 0.1 GiB). Even issue numbers are the "
         "development half, odd ones the test half (a rule fixed before scoring).\n\n";
  for (const auto& [name, hf] : halves) {
    out << fmt::format("- {} half: {} records, {} decisions matched; {}/{} sizes within the "
                       "aim\n", name, hf.records, hf.matched, hf.alloc_within, hf.alloc_rows);
  }
  out << fmt::format("- KV and graph recomputed from the model's hyperparameters (fs/ggml "
                     "GraphSize): {}/{} within the aim\n\n", sizes_within, sizes);
  out << "| record | half | release | offload logged / planned | split logged / planned | "
         "matched | allocations, partial, full: logged/planned MiB |\n"
         "|---|---|---|---|---|---|---|\n"
      << decisions.str()
      << "\n| record | size | logged MiB | planned MiB | error MiB | within |\n"
         "|---|---|---|---|---|---|\n"
      << recomputed.str();
  const std::string text = out.str();
  const fs::path doc_path = root / "docs/validation-ollama.md";
  if (std::getenv("VRAMFIT_UPDATE_GOLDEN") != nullptr) std::ofstream(doc_path) << text;
  std::ifstream in(doc_path);
  std::stringstream committed;
  committed << in.rdbuf();
  EXPECT_EQ(committed.str(), text)
      << "docs/validation-ollama.md is stale: rerun with VRAMFIT_UPDATE_GOLDEN=1";
  EXPECT_GE(halves["dev"].matched, kFloorDev);
  EXPECT_GE(halves["test"].matched, kFloorTest);
  EXPECT_EQ(sizes_within, sizes);
  EXPECT_TRUE(unexplained.empty()) << "misses without a scoring_note: " << unexplained.size();
}

}  // namespace
}  // namespace vramfit::ollama
